import { startFakeGoogleTokenEndpoint } from '@gw/testkit';
import { PROVIDER_CONTRACT_INPUTS, runProviderContract } from '@gw/testkit/provider-contract';
import { afterAll, describe, expect, it } from 'vitest';
import * as anthropicWire from '../../../testing/fixtures/anthropic-fixtures.ts';
import * as geminiWire from '../../../testing/fixtures/gemini-fixtures.ts';
import { embeddingsAnswer } from '../../../testing/fixtures/vertex-fixtures.ts';
import { createVertexAdapter } from './vertex-adapter.ts';

// The service account's token_uri points at a fake Google token endpoint on loopback; the contract's fake
// upstream stands in for Vertex through an explicit base URL.
const tokenEndpoint = await startFakeGoogleTokenEndpoint();
afterAll(() => tokenEndpoint.close());

const key = {
  id: 'vertex-key',
  value: tokenEndpoint.serviceAccount(),
  config: { project_id: 'test-project', region: 'us-central1' },
};
const geminiModelPath =
  '/v1/projects/test-project/locations/us-central1/publishers/google/models/gemini-2.5-flash';
const claudeModelPath =
  '/v1/projects/test-project/locations/us-central1/publishers/anthropic/models/claude-sonnet-4-5@20250929';
const bearer = expect.stringMatching(/^Bearer ya29\.test-token-\d+$/);
const weather = PROVIDER_CONTRACT_INPUTS.weatherTool.function;

runProviderContract({
  name: 'vertex',
  adapter: createVertexAdapter(),
  model: 'gemini-2.5-flash',
  key,
  upstream: {
    chat: () => ({ body: geminiWire.chatAnswer }),
    chatTools: () => ({ body: geminiWire.toolAnswer }),
    chatStream: () => ({ chunks: geminiWire.chatStreamEvents }),
    chatStreamTools: () => ({ chunks: geminiWire.chatStreamToolEvents }),
    error: () => ({ status: 400, body: geminiWire.errorAnswer }),
    text: () => ({ body: geminiWire.textAnswer }),
    embeddings: () => ({ body: embeddingsAnswer }),
  },
  billedUsage: {
    chat: () => ({ body: geminiWire.billedAnswer }),
    chatStream: () => ({ chunks: geminiWire.billedStreamEvents }),
    expected: geminiWire.billedUsage,
    images: {
      chat: () => ({ body: geminiWire.imageAnswer }),
      chatStream: () => ({ chunks: geminiWire.imageStreamEvents }),
      expected: geminiWire.imageUsage,
    },
  },
  expectRequest: {
    chat: (request) => {
      expect(request.path).toBe(`${geminiModelPath}:generateContent`);
      expect(request.headers['authorization']).toEqual(bearer);
      expect(request.headers['x-goog-api-key']).toBeUndefined();
      expect(request.body).toEqual({
        contents: [{ role: 'user', parts: [{ text: 'Hi' }] }],
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        generationConfig: { maxOutputTokens: 50, temperature: 0.2, stopSequences: ['END'] },
      });
    },
    chatTools: (request) => {
      expect(request.body).toMatchObject({
        contents: [
          { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
          { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { temp: 21 } } }] },
        ],
        tools: [{ functionDeclarations: [{ name: weather.name, parameters: weather.parameters }] }],
        toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['get_weather'] } },
      });
    },
    vision: (request) => {
      expect((request.body as { contents: Array<{ parts: unknown[] }> }).contents[0]?.parts).toHaveLength(3);
    },
    chatStream: (request) => {
      expect(request.path).toBe(`${geminiModelPath}:streamGenerateContent?alt=sse`);
      expect(request.headers['authorization']).toEqual(bearer);
    },
    text: (request) => {
      expect(request.path).toBe(`${geminiModelPath}:generateContent`);
      expect(request.body).toMatchObject({ contents: [{ role: 'user', parts: [{ text: 'Once' }] }] });
    },
    embeddings: (request) => {
      expect(request.path).toBe(`${geminiModelPath}:predict`);
      expect(request.headers['authorization']).toEqual(bearer);
      expect(request.body).toEqual({ instances: [{ content: 'a' }, { content: 'b' }] });
    },
  },
  skip: {
    chatStreamTools:
      'Gemini streams each function call whole in one event, so arguments never arrive in fragments ' +
      '(the mapping is shared with gemini: map-gemini-stream.test.ts)',
  },
});

runProviderContract({
  name: 'vertex (Claude)',
  adapter: createVertexAdapter(),
  model: 'claude-sonnet-4-5@20250929',
  key,
  upstream: {
    chat: () => ({ body: { ...anthropicWire.chatAnswer, usage: { input_tokens: 10, output_tokens: 5 } } }),
    chatTools: () => ({ body: anthropicWire.toolAnswer }),
    chatStream: () => ({ chunks: anthropicWire.chatStreamEvents }),
    chatStreamTools: () => ({ chunks: anthropicWire.chatStreamToolEvents }),
    error: () => ({ status: 400, body: anthropicWire.errorAnswer }),
    text: () => ({
      body: {
        ...anthropicWire.chatAnswer,
        content: [{ type: 'text', text: 'Once upon' }],
        usage: { input_tokens: 3, output_tokens: 2 },
      },
    }),
  },
  billedUsage: {
    chat: () => ({ body: anthropicWire.billedAnswer }),
    chatStream: () => ({ chunks: anthropicWire.billedStreamEvents }),
    expected: anthropicWire.billedUsage,
  },
  expectRequest: {
    chat: (request) => {
      expect(request.path).toBe(`${claudeModelPath}:rawPredict`);
      expect(request.headers['authorization']).toEqual(bearer);
      expect(request.headers['x-api-key']).toBeUndefined();
      expect(request.headers['anthropic-version']).toBeUndefined();
      expect(request.body).toEqual({
        anthropic_version: 'vertex-2023-10-16',
        max_tokens: 50,
        system: 'Be brief.',
        messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
        temperature: 0.2,
        stop_sequences: ['END'],
      });
    },
    chatTools: (request) => {
      expect(request.body).not.toHaveProperty('model');
      expect(request.body).toMatchObject({
        anthropic_version: 'vertex-2023-10-16',
        tool_choice: { type: 'tool', name: 'get_weather' },
      });
    },
    chatStream: (request) => {
      expect(request.path).toBe(`${claudeModelPath}:streamRawPredict`);
      expect(request.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', stream: true });
      expect(request.body).not.toHaveProperty('model');
    },
    vision: (request) => {
      expect((request.body as { messages: Array<{ content: unknown[] }> }).messages[0]?.content).toEqual([
        { type: 'text', text: 'What is this?' },
        { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
        { type: 'image', source: { type: 'url', url: 'https://example.com/cat.png' } },
      ]);
    },
    text: (request) => {
      expect(request.path).toBe(`${claudeModelPath}:rawPredict`);
    },
  },
  skip: {
    embeddings: 'Claude has no embeddings; Vertex embeddings are covered by the Gemini run above',
  },
});

describe('vertex tokens across the contract runs', () => {
  it('exchanged the service account for a token once per adapter, with a signed JWT-bearer assertion', () => {
    expect(tokenEndpoint.exchanges).toHaveLength(2);
    for (const exchange of tokenEndpoint.exchanges) {
      expect(exchange.grantType).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
      expect(exchange.signatureValid).toBe(true);
    }
  });
});
