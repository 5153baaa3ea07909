import { networkConfigSchema } from '@gw/shared';
import { startFakeOpenAi } from '@gw/testkit';
import {
  openAiRequestExpectations,
  PROVIDER_CONTRACT_INPUTS,
  runProviderContract,
} from '@gw/testkit/provider-contract';
import { describe, expect, it } from 'vitest';
import { openAiWireFixtures } from '../../../testing/fixtures/openai-wire-fixtures.ts';
import { UpstreamClient } from '../../upstream-client.ts';
import { ollamaAdapter } from './ollama-adapter.ts';

const model = 'llama3.2';

const wire = openAiWireFixtures({
  model,
  extra: { system_fingerprint: 'fp_ollama' },
  streamToolCall: 'whole',
  toolCallId: 'call_7fvyqo2k',
  errorBody: {
    error: { message: 'bad things happened', type: 'invalid_request_error', param: null, code: null },
  },
  // Ollama's OpenAI-compatible usage holds the three totals only: no cached or reasoning counts to map.
  billedUsage: {
    wire: { prompt_tokens: 1_200, completion_tokens: 300, total_tokens: 1_500 },
    expected: { prompt_tokens: 1_200, completion_tokens: 300, total_tokens: 1_500 },
  },
});

runProviderContract({
  name: 'ollama',
  adapter: ollamaAdapter,
  model,
  // Ollama runs without keys: the contract runs keyless.
  upstream: wire.upstream,
  billedUsage: wire.billedUsage,
  expectRequest: openAiRequestExpectations({ model, headers: { authorization: undefined } }),
});

describe('ollama adapter', () => {
  it('declares that it needs a base URL and no key', () => {
    expect(ollamaAdapter.capabilities).toMatchObject({ requiresBaseUrl: true, authOptional: true });
  });

  it('sends a configured key as a bearer token', async () => {
    const fake = await startFakeOpenAi();
    const http = new UpstreamClient();
    try {
      await ollamaAdapter.chat!(
        { model, ...PROVIDER_CONTRACT_INPUTS.chat },
        {
          provider: 'ollama',
          http,
          baseUrl: fake.url,
          key: { id: 'k1', value: 'proxy-token', config: {} },
          network: networkConfigSchema.parse({}),
          timeoutMs: 5_000,
          signal: new AbortController().signal,
          environment: {},
        },
      );
      expect(fake.last().headers['authorization']).toBe('Bearer proxy-token');
    } finally {
      await http.close();
      await fake.close();
    }
  });
});
