import { openAiRequestExpectations, runProviderContract } from '@gw/testkit/provider-contract';
import { expect, it } from 'vitest';
import { openAiWireFixtures } from '../../../testing/fixtures/openai-wire-fixtures.ts';
import { sglAdapter } from './sgl-adapter.ts';

const model = 'meta-llama/Llama-3.1-8B-Instruct';

runProviderContract({
  name: 'sgl',
  adapter: sglAdapter,
  model,
  upstream: openAiWireFixtures({
    model,
    // SGLang's error body states the HTTP status as `code`.
    errorBody: {
      object: 'error',
      message: 'bad things happened',
      type: 'BadRequestError',
      param: null,
      code: 400,
    },
  }).upstream,
  expectRequest: openAiRequestExpectations({ model, headers: { authorization: undefined } }),
});

it('sgl declares that it needs a base URL and no key', () => {
  expect(sglAdapter.capabilities).toMatchObject({ requiresBaseUrl: true, authOptional: true });
});
