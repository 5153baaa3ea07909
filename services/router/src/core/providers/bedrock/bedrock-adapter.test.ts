import { PROVIDER_CONTRACT_INPUTS, runProviderContract } from '@gw/testkit/provider-contract';
import { expect } from 'vitest';
import {
  billedAnswer,
  billedStreamFrames,
  billedUsage,
  chatAnswer,
  chatStreamFrames,
  chatStreamToolFrames,
  ERROR_HEADERS,
  EVENT_STREAM_HEADERS,
  errorAnswer,
  MODEL_ID,
  textAnswer,
  toolAnswer,
} from '../../../testing/fixtures/bedrock-fixtures.ts';
import { createBedrockAdapter } from './bedrock-adapter.ts';

const weather = PROVIDER_CONTRACT_INPUTS.weatherTool.function;
const ENCODED_MODEL = 'anthropic.claude-3-5-sonnet-20240620-v1%3A0';

/** SigV4 with the key's static credentials; bedrock-signing.test.ts verifies such signatures. */
function expectSigned(headers: Record<string, string | string[] | undefined>): void {
  expect(headers['authorization']).toMatch(
    /^AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE\/\d{8}\/us-west-2\/bedrock\/aws4_request, SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/,
  );
  expect(headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
}

runProviderContract({
  name: 'bedrock',
  // No credential chain: every call here must sign with the key's own credentials.
  adapter: createBedrockAdapter({
    credentialChain: () => Promise.reject(new Error('the contract key has static credentials')),
  }),
  model: MODEL_ID,
  key: {
    id: 'k1',
    value: '',
    config: {
      region: 'us-west-2',
      access_key: 'AKIAIOSFODNN7EXAMPLE',
      secret_key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
    },
  },
  upstream: {
    chat: () => ({ body: chatAnswer }),
    chatTools: () => ({ body: toolAnswer }),
    chatStream: () => ({ headers: EVENT_STREAM_HEADERS, chunks: chatStreamFrames }),
    chatStreamTools: () => ({ headers: EVENT_STREAM_HEADERS, chunks: chatStreamToolFrames }),
    error: () => ({ status: 400, headers: ERROR_HEADERS, body: errorAnswer }),
    // Bedrock has no completions API: text is a Converse call whose answer is the completion.
    text: () => ({ body: textAnswer }),
  },
  billedUsage: {
    chat: () => ({ body: billedAnswer }),
    chatStream: () => ({ headers: EVENT_STREAM_HEADERS, chunks: billedStreamFrames }),
    expected: billedUsage,
  },
  expectRequest: {
    chat: (request) => {
      expect(request.method).toBe('POST');
      expect(request.path).toBe(`/model/${ENCODED_MODEL}/converse`);
      expect(request.headers['content-type']).toBe('application/json');
      expectSigned(request.headers);
      expect(request.body).toEqual({
        messages: [{ role: 'user', content: [{ text: 'Hi' }] }],
        system: [{ text: 'Be brief.' }],
        inferenceConfig: { maxTokens: 50, temperature: 0.2, stopSequences: ['END'] },
      });
    },
    chatTools: (request) => {
      expect(request.body).toEqual({
        messages: [
          { role: 'user', content: [{ text: 'Weather in Paris?' }] },
          {
            role: 'assistant',
            content: [{ toolUse: { toolUseId: 'call_1', name: 'get_weather', input: { city: 'Paris' } } }],
          },
          {
            role: 'user',
            content: [{ toolResult: { toolUseId: 'call_1', content: [{ json: { temp: 21 } }] } }],
          },
        ],
        toolConfig: {
          tools: [
            {
              toolSpec: {
                name: weather.name,
                description: weather.description,
                inputSchema: { json: weather.parameters },
              },
            },
          ],
          toolChoice: { tool: { name: 'get_weather' } },
        },
      });
    },
    chatStream: (request) => {
      expect(request.path).toBe(`/model/${ENCODED_MODEL}/converse-stream`);
      expect(request.headers['accept']).toBe('application/vnd.amazon.eventstream');
      expectSigned(request.headers);
      expect(request.body).toMatchObject({
        system: [{ text: 'Be brief.' }],
        inferenceConfig: { maxTokens: 50 },
      });
    },
    text: (request) => {
      expect(request.path).toBe(`/model/${ENCODED_MODEL}/converse`);
      expect(request.body).toEqual({
        messages: [{ role: 'user', content: [{ text: 'Once' }] }],
        inferenceConfig: { maxTokens: 5 },
      });
    },
    textStream: (request) => {
      expect(request.path).toBe(`/model/${ENCODED_MODEL}/converse-stream`);
      expect(request.body).toMatchObject({ messages: [{ role: 'user', content: [{ text: 'Once' }] }] });
    },
  },
  skip: {
    vision:
      'the contract input has an https image URL, which Converse cannot fetch: bedrock refuses it with a 400 ' +
      'by design (data URLs are covered in convert-to-bedrock-request.test.ts)',
    embeddings:
      'Titan embeds one input per InvokeModel call, so raw is the list of per-call bodies rather than the ' +
      'one body the contract compares; bedrock-embeddings.test.ts covers it',
  },
});
