import { openAiRequestExpectations, runProviderContract } from '@gw/testkit/provider-contract';
import { expect, it } from 'vitest';
import { openAiWireFixtures } from '../../../testing/fixtures/openai-wire-fixtures.ts';
import { sglAdapter } from './sgl-adapter.ts';

const model = 'meta-llama/Llama-3.1-8B-Instruct';

const wire = openAiWireFixtures({
  model,
  // SGLang's error body states the HTTP status as `code`.
  errorBody: {
    object: 'error',
    message: 'bad things happened',
    type: 'BadRequestError',
    param: null,
    code: 400,
  },
  // SGLang reports its radix cache's hits (--enable-cache-report) as OpenAI does; no reasoning count.
  billedUsage: {
    wire: {
      prompt_tokens: 1_200,
      total_tokens: 1_500,
      completion_tokens: 300,
      prompt_tokens_details: { cached_tokens: 1_024 },
    },
    expected: {
      prompt_tokens: 1_200,
      completion_tokens: 300,
      total_tokens: 1_500,
      prompt_tokens_details: { cached_tokens: 1_024 },
    },
  },
});

runProviderContract({
  name: 'sgl',
  adapter: sglAdapter,
  model,
  upstream: wire.upstream,
  billedUsage: wire.billedUsage,
  expectRequest: openAiRequestExpectations({ model, headers: { authorization: undefined } }),
});

it('sgl declares that it needs a base URL and no key', () => {
  expect(sglAdapter.capabilities).toMatchObject({ requiresBaseUrl: true, authOptional: true });
});
