import { PROVIDER_CONTRACT_INPUTS, runProviderContract } from '@gw/testkit/provider-contract';
import { expect } from 'vitest';
import {
  cohereChatAnswer,
  cohereEmbedAnswer,
  cohereErrorAnswer,
  cohereSse,
  cohereTextAnswer,
  cohereTextStreamEvents,
  cohereToolCallAnswer,
  cohereToolStreamEvents,
} from '../../../testing/fixtures/cohere-fixtures.ts';
import { cohereAdapter } from './cohere-adapter.ts';

const body = (request: { body: unknown }) => request.body as Record<string, unknown>;

runProviderContract({
  name: 'cohere',
  adapter: cohereAdapter,
  model: 'command-a-03-2025',
  key: { id: 'k1', value: 'co-test', config: {} },
  upstream: {
    chat: () => ({ body: cohereChatAnswer }),
    chatTools: () => ({ body: cohereToolCallAnswer }),
    chatStream: () => ({ chunks: cohereSse(cohereTextStreamEvents) }),
    chatStreamTools: () => ({ chunks: cohereSse(cohereToolStreamEvents) }),
    error: () => ({ status: 400, body: cohereErrorAnswer }),
    text: () => ({ body: cohereTextAnswer }),
    embeddings: () => ({ body: cohereEmbedAnswer }),
  },
  // Cohere bills `billed_units` (its `tokens` count the prompt template too, 506/7 here), and reports prompt-cache
  // hits as `cached_tokens` beside them; no reasoning count.
  billedUsage: {
    chat: () => ({ body: cohereChatAnswer }),
    chatStream: () => ({ chunks: cohereSse(cohereTextStreamEvents) }),
    expected: {
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
      prompt_tokens_details: { cached_tokens: 2 },
    },
  },
  expectRequest: {
    chat: (request) => {
      expect(request.method).toBe('POST');
      expect(request.path).toBe('/v2/chat');
      expect(request.headers.authorization).toBe('Bearer co-test');
      expect(body(request)).toEqual({
        model: 'command-a-03-2025',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: 'Hi' },
        ],
        max_tokens: 50,
        temperature: 0.2,
        stop_sequences: ['END'],
      });
    },
    chatTools: (request) => {
      expect(request.path).toBe('/v2/chat');
      const { function: weather } = PROVIDER_CONTRACT_INPUTS.weatherTool;
      expect(body(request)).toEqual({
        model: 'command-a-03-2025',
        messages: [
          { role: 'user', content: 'Weather in Paris?' },
          {
            role: 'assistant',
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '{"temp":21}' },
        ],
        tools: [
          {
            type: 'function',
            function: {
              name: weather.name,
              description: weather.description,
              parameters: weather.parameters,
            },
          },
        ],
        tool_choice: 'REQUIRED',
      });
    },
    vision: (request) => {
      expect(body(request)['messages']).toEqual([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'high' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
          ],
        },
      ]);
    },
    chatStream: (request) => {
      expect(request.path).toBe('/v2/chat');
      expect(body(request)['stream']).toBe(true);
    },
    text: (request) => {
      expect(request.path).toBe('/v2/chat');
      expect(body(request)).toMatchObject({
        model: 'command-a-03-2025',
        messages: [{ role: 'user', content: 'Once' }],
        max_tokens: 5,
      });
    },
    textStream: (request) => {
      expect(request.path).toBe('/v2/chat');
      expect(body(request)).toMatchObject({ messages: [{ role: 'user', content: 'Once' }], stream: true });
    },
    embeddings: (request) => {
      expect(request.path).toBe('/v2/embed');
      expect(request.headers.authorization).toBe('Bearer co-test');
      expect(body(request)).toEqual({
        model: 'command-a-03-2025',
        texts: ['a', 'b'],
        input_type: 'search_document',
        embedding_types: ['float'],
      });
    },
  },
});
