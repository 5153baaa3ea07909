// cache_affinity through the router core: a plan target's affinity keeps every request of a conversation on one
// provider key (the provider's prompt cache is per key), spreads conversations over the keys, and a key that
// fails a request sends its retry to the conversation's next key, the same one each time.
import {
  createMetrics,
  LiveSettings,
  outboundPolicy,
  parseGatewayConfig,
  secretReferenceRule,
  silentLogger,
} from '@gw/shared';
import { MemoryStore } from '@gw/shared/store';
import { type FakeOpenAi, startFakeOpenAi } from '@gw/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RouterCore } from './router-core.ts';
import type { CompletionRoute } from './router-service.ts';

let fake: FakeOpenAi;
let core: RouterCore;
let store: MemoryStore;

beforeAll(async () => {
  fake = await startFakeOpenAi();
  store = await MemoryStore.open();
  const config = parseGatewayConfig({
    providers: {
      openai: {
        keys: ['k1', 'k2', 'k3', 'k4'].map((id) => ({ id, value: `sk-${id}` })),
        network_config: { base_url: fake.url, max_retries: 1, retry_backoff_initial_ms: 1 },
      },
    },
  });
  core = await RouterCore.start({
    store,
    logger: silentLogger(),
    metrics: createMetrics({ service: 'key-affinity-test' }),
    environment: {},
    seedProviders: config.providers,
    client: LiveSettings.of(config).client,
    outbound: outboundPolicy(),
    secretReferences: secretReferenceRule({}),
  });
});
afterAll(async () => {
  await core.close();
  await store.close();
  await fake.close();
});

const route = (affinity: string): CompletionRoute => ({
  requestId: `r-${affinity}`,
  operation: 'chat',
  targets: [{ provider: 'openai', model: 'gpt-4o', affinity }],
  params: {},
  messages: [{ role: 'user', content: 'hello' }],
});
const call = { signal: new AbortController().signal };
/** The key each of the fake's requests since `from` carried. */
const keysSince = (from: number) => fake.requests.slice(from).map((request) => request.headers.authorization);

it('sends every request of one affinity to one key, and different affinities over the keys', async () => {
  const from = fake.requests.length;
  for (let index = 0; index < 10; index++) await core.complete(route('conversation-a'), call);
  expect(new Set(keysSince(from)).size).toBe(1);

  const spread = fake.requests.length;
  for (let index = 0; index < 40; index++) await core.complete(route(`conversation-${index}`), call);
  expect(new Set(keysSince(spread)).size).toBe(4);
});

it('retries a failed request on the affinity’s next key, the same one every time', async () => {
  const from = fake.requests.length;
  await core.complete(route('conversation-b'), call);
  const [home] = keysSince(from);
  const served = [];
  for (let index = 0; index < 3; index++) {
    fake.enqueue({ status: 500, json: { error: { message: 'key down', type: 'server_error' } } });
    const before = fake.requests.length;
    const result = await core.complete(route('conversation-b'), call);
    const [failed, retried] = keysSince(before);
    expect(failed).toBe(home);
    expect(retried).not.toBe(home);
    served.push([retried, result.servedBy?.keyId]);
  }
  expect(new Set(served.map(([key]) => key)).size).toBe(1);
  expect(`Bearer sk-${served[0]![1]}`).toBe(served[0]![0]);
});
