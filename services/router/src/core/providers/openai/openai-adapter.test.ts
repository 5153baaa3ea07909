import { openAiRequestExpectations, runProviderContract } from '@gw/testkit/provider-contract';
import { openAiWireFixtures } from '../../../testing/fixtures/openai-wire-fixtures.ts';
import { openAiAdapter } from './openai-adapter.ts';

const model = 'gpt-4o-mini';

const wire = openAiWireFixtures({
  model: 'gpt-4o-mini-2024-07-18',
  extra: { system_fingerprint: 'fp_0ba0d124f1' },
});

runProviderContract({
  name: 'openai',
  adapter: openAiAdapter,
  model,
  key: { id: 'k1', value: 'sk-test', config: {} },
  upstream: wire.upstream,
  billedUsage: wire.billedUsage,
  expectRequest: openAiRequestExpectations({ model, headers: { authorization: 'Bearer sk-test' } }),
});
