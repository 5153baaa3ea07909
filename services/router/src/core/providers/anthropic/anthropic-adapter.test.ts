import { PROVIDER_CONTRACT_INPUTS, runProviderContract } from '@gw/testkit/provider-contract';
import { expect } from 'vitest';
import {
  billedAnswer,
  billedStreamEvents,
  billedUsage,
  chatAnswer,
  chatStreamEvents,
  chatStreamToolEvents,
  errorAnswer,
  toolAnswer,
} from '../../../testing/fixtures/anthropic-fixtures.ts';
import { anthropicAdapter } from './anthropic-adapter.ts';

const weather = PROVIDER_CONTRACT_INPUTS.weatherTool.function;

runProviderContract({
  name: 'anthropic',
  adapter: anthropicAdapter,
  model: 'claude-sonnet-4-5',
  key: { id: 'k1', value: 'sk-ant-test', config: {} },
  upstream: {
    chat: () => ({ body: chatAnswer }),
    chatTools: () => ({ body: toolAnswer }),
    chatStream: () => ({ chunks: chatStreamEvents }),
    chatStreamTools: () => ({ chunks: chatStreamToolEvents }),
    error: () => ({ status: 400, body: errorAnswer }),
    // Anthropic has no completions endpoint: text is a chat whose answer is the completion.
    text: () => ({
      body: {
        ...chatAnswer,
        content: [{ type: 'text', text: 'Once upon' }],
        usage: { input_tokens: 3, output_tokens: 2 },
      },
    }),
  },
  billedUsage: {
    chat: () => ({ body: billedAnswer }),
    chatStream: () => ({ chunks: billedStreamEvents }),
    expected: billedUsage,
  },
  expectRequest: {
    chat: (request) => {
      expect(request.method).toBe('POST');
      expect(request.path).toBe('/v1/messages');
      expect(request.headers['x-api-key']).toBe('sk-ant-test');
      expect(request.headers['anthropic-version']).toBe('2023-06-01');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['authorization']).toBeUndefined();
      expect(request.body).toEqual({
        model: 'claude-sonnet-4-5',
        max_tokens: 50,
        system: 'Be brief.',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
        temperature: 0.2,
        stop_sequences: ['END'],
      });
    },
    chatTools: (request) => {
      expect(request.body).toEqual({
        model: 'claude-sonnet-4-5',
        max_tokens: 4096,
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
          {
            role: 'assistant',
            content: [{ type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } }],
          },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: '{"temp":21}' }] },
        ],
        tools: [{ name: weather.name, description: weather.description, input_schema: weather.parameters }],
        tool_choice: { type: 'tool', name: 'get_weather' },
      });
    },
    vision: (request) => {
      expect((request.body as { messages: unknown }).messages).toEqual([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
          ],
        },
      ]);
    },
    text: (request) => {
      expect(request.path).toBe('/v1/messages');
      expect(request.body).toEqual({
        model: 'claude-sonnet-4-5',
        max_tokens: 5,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Once' }] }],
      });
    },
    textStream: (request) => {
      expect(request.body).toMatchObject({
        stream: true,
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Once' }] }],
      });
    },
    chatStream: (request) => {
      expect(request.path).toBe('/v1/messages');
      expect(request.body).toMatchObject({ stream: true, max_tokens: 50, system: 'Be brief.' });
    },
  },
});
