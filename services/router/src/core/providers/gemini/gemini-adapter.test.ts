import { PROVIDER_CONTRACT_INPUTS, runProviderContract } from '@gw/testkit/provider-contract';
import { expect } from 'vitest';
import {
  billedAnswer,
  billedStreamEvents,
  billedUsage,
  chatAnswer,
  chatStreamEvents,
  chatStreamToolEvents,
  embeddingsAnswer,
  errorAnswer,
  imageAnswer,
  imageStreamEvents,
  imageUsage,
  textAnswer,
  toolAnswer,
} from '../../../testing/fixtures/gemini-fixtures.ts';
import { geminiAdapter } from './gemini-adapter.ts';

const weather = PROVIDER_CONTRACT_INPUTS.weatherTool.function;

runProviderContract({
  name: 'gemini',
  adapter: geminiAdapter,
  model: 'gemini-2.5-flash',
  key: { id: 'k1', value: 'AIza-test', config: {} },
  upstream: {
    chat: () => ({ body: chatAnswer }),
    chatTools: () => ({ body: toolAnswer }),
    chatStream: () => ({ chunks: chatStreamEvents }),
    chatStreamTools: () => ({ chunks: chatStreamToolEvents }),
    error: () => ({ status: 400, body: errorAnswer }),
    text: () => ({ body: textAnswer }),
    embeddings: () => ({ body: embeddingsAnswer }),
  },
  billedUsage: {
    chat: () => ({ body: billedAnswer }),
    chatStream: () => ({ chunks: billedStreamEvents }),
    expected: billedUsage,
    images: {
      chat: () => ({ body: imageAnswer }),
      chatStream: () => ({ chunks: imageStreamEvents }),
      expected: imageUsage,
    },
  },
  expectRequest: {
    chat: (request) => {
      expect(request.method).toBe('POST');
      expect(request.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
      expect(request.headers['x-goog-api-key']).toBe('AIza-test');
      expect(request.headers['authorization']).toBeUndefined();
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.body).toEqual({
        contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        generationConfig: { maxOutputTokens: 50, temperature: 0.2, stopSequences: ['END'] },
      });
    },
    chatTools: (request) => {
      expect(request.body).toEqual({
        contents: [
          { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
          { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 21 } } }] },
        ],
        tools: [
          {
            functionDeclarations: [
              { name: weather.name, description: weather.description, parameters: weather.parameters },
            ],
          },
        ],
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
      });
    },
    vision: (request) => {
      expect((request.body as { contents: unknown }).contents).toEqual([
        {
          role: 'user',
          parts: [
            { text: 'What is this?' },
            { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
            { fileData: { mimeType: 'image/png', fileUri: 'https://example.com/cat.png' } },
          ],
        },
      ]);
    },
    chatStream: (request) => {
      expect(request.path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
      expect(request.headers['x-goog-api-key']).toBe('AIza-test');
    },
    text: (request) => {
      expect(request.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
      expect(request.body).toEqual({
        contents: [{ role: 'user', parts: [{ text: 'Once' }] }],
        generationConfig: { maxOutputTokens: 5 },
      });
    },
    embeddings: (request) => {
      expect(request.path).toBe('/v1beta/models/gemini-2.5-flash:batchEmbedContents');
      expect(request.body).toEqual({
        requests: [
          { model: 'models/gemini-2.5-flash', content: { parts: [{ text: 'a' }] } },
          { model: 'models/gemini-2.5-flash', content: { parts: [{ text: 'b' }] } },
        ],
      });
    },
  },
  skip: {
    chatStreamTools:
      'Gemini streams each function call whole in one event, so arguments never arrive in fragments; ' +
      'the adapter passes it on as an opening delta and one arguments delta (map-gemini-stream.test.ts)',
  },
});
