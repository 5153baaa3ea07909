// What the router records for routing strategies (docs/routing-health.md "Signals"): a whole answer counts with
// its latency as its time to first token and its usage's tokens; a stream counts at its first content chunk (a
// role-only preamble is no token) and measures its latency and tokens at its end; both are in flight from the
// call to the end of the answer; the keys' rpm/tpm limits reach the board.
import {
  createMetrics,
  fixed,
  LiveSettings,
  outboundPolicy,
  parseGatewayConfig,
  secretReferenceRule,
  silentLogger,
} from '@gw/shared';
import { HealthBoard, healthId, loadBalancerConfigSchema } from '@gw/shared/health';
import { MemoryStore } from '@gw/shared/store';
import { type FakeOpenAi, startFakeOpenAi } from '@gw/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RouterCore } from './router-core.ts';
import type { ChatRoute } from './router-service.ts';

let fake: FakeOpenAi;
let core: RouterCore;
let store: MemoryStore;
const health = new HealthBoard({ config: fixed(loadBalancerConfigSchema.parse({})) });

beforeAll(async () => {
  fake = await startFakeOpenAi();
  store = await MemoryStore.open();
  const config = parseGatewayConfig({
    providers: {
      openai: {
        keys: [{ id: 'main', value: 'sk-router-key', rpm_limit: 10 }],
        network_config: { base_url: fake.url },
      },
    },
  });
  core = await RouterCore.start({
    store,
    logger: silentLogger(),
    metrics: createMetrics({ service: 'router-signals-test' }),
    environment: {},
    seedProviders: config.providers,
    client: LiveSettings.of(config).client,
    outbound: outboundPolicy(),
    secretReferences: secretReferenceRule({}),
    health,
  });
});
afterAll(async () => {
  await core.close();
  await store.close();
  await fake.close();
});

const chat = (model: string): ChatRoute => ({
  requestId: 'r',
  operation: 'chat',
  targets: [{ provider: 'openai', model }],
  messages: [{ role: 'user', content: 'hi' }],
  params: {},
});

it('records a whole answer: its latency as its time to first token, and its tokens', async () => {
  const target = healthId.target('openai', 'main', 'gpt-4o-mini');
  await core.complete(chat('gpt-4o-mini'), { signal: AbortSignal.timeout(10_000) });
  await health.recompute();
  const signals = health.signals(target);
  expect(signals).toMatchObject({ requestsPerMinute: 1, tokensPerMinute: 18, inflight: 0 });
  expect(signals.latencyP95Ms).toBeDefined();
  expect(signals.ttftP95Ms).toBeDefined();
  // The key's rpm_limit reached the board: 1 of 10 requests this minute.
  expect(health.signals(healthId.model('openai', 'gpt-4o-mini')).headroom).toBeCloseTo(0.9, 5);
});

it('records a stream at its first content chunk, and its latency and tokens at its end', async () => {
  const target = healthId.target('openai', 'main', 'gpt-4o');
  const stream = core.stream(chat('gpt-4o'), { signal: AbortSignal.timeout(10_000) })[Symbol.asyncIterator]();
  const role = await stream.next();
  expect(role.value?.chunk.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });
  // In flight from the call; not counted before a token came.
  expect(health.signals(target)).toMatchObject({ inflight: 1, requestsPerMinute: 0 });
  const first = await stream.next();
  expect(first.value?.chunk.choices[0]?.delta?.content).toBe('Hel');
  expect(health.signals(target)).toMatchObject({ inflight: 1, requestsPerMinute: 1, tokensPerMinute: 0 });
  await health.recompute();
  expect(health.signals(target).ttftP95Ms).toBeDefined();
  expect(health.signals(target).latencyP95Ms).toBeUndefined();
  while (!(await stream.next()).done) {
    // Read to its end.
  }
  expect(health.signals(target)).toMatchObject({ inflight: 0, requestsPerMinute: 1, tokensPerMinute: 12 });
  await health.recompute();
  expect(health.signals(target).latencyP95Ms).toBeDefined();
});

it('takes a stream its reader left after the first chunk out of flight', async () => {
  const target = healthId.target('openai', 'main', 'gpt-4o-mini');
  const stream = core
    .stream(chat('gpt-4o-mini'), { signal: AbortSignal.timeout(10_000) })
    [Symbol.asyncIterator]();
  expect((await stream.next()).done).toBe(false);
  expect(health.signals(target).inflight).toBe(1);
  await stream.return?.();
  expect(health.signals(target).inflight).toBe(0);
  expect((await stream.next()).done).toBe(true);
});
