// The signals routing strategies read (docs/routing-health.md "Signals"): time to first token and tokens in the
// window's rows, requests in flight summed over the router replicas, and the headroom the keys' rpm/tpm limits
// leave; the same on every replica and in governance (a reader of the store) within one recompute.
import { afterAll, describe, expect, it } from 'vitest';
import { deleteRedisKeys, testRedisPrefix } from '../../../testkit/src/redis-prefix.ts';
import { fixed } from '../config/live.ts';
import { RedisStore } from '../store/redis-store.ts';
import type { Store } from '../store/store.ts';
import { HealthBoard } from './health-board.ts';
import { healthId } from './health-id.ts';
import type { ProviderKeyLimits } from './health-signals.ts';
import { loadBalancerConfigSchema } from './load-balancer-config.ts';

const config = loadBalancerConfigSchema.parse({ window_ms: 30_000, bucket_ms: 1_000 });
const TARGET = { provider: 'openai', key: 'a', model: 'gpt-4o' };
const TARGET_ID = healthId.target('openai', 'a', 'gpt-4o');
const MODEL_ID = healthId.model('openai', 'gpt-4o');
const url = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const prefix = testRedisPrefix();

afterAll(() => deleteRedisKeys(url, prefix));

function boardAt(
  clock: { now: number },
  options: { store?: Store; share?: { replicaId: string; publish: boolean } } = {},
) {
  return new HealthBoard({ config: fixed(config), now: () => clock.now, ...options });
}

describe('HealthBoard.signals', () => {
  it('reads time to first token, latency, requests and tokens of the last minute, this replica live', async () => {
    const clock = { now: 1_000_000 };
    const board = boardAt(clock);
    // 90 whole answers (their first token comes with them), 10 streams: counted at their first content chunk
    // (400 ms), measured at their end (3 s, 50 tokens).
    for (let index = 0; index < 90; index++) {
      board.record(TARGET, { failure: false, latencyMs: 20, ttftMs: 20, tokens: 18 });
    }
    for (let index = 0; index < 10; index++) {
      board.record(TARGET, { failure: false, ttftMs: 400 });
      board.measure(TARGET, { latencyMs: 3_000, tokens: 50 });
    }
    // Counted at once, before any recompute.
    expect(board.signals(TARGET_ID)).toMatchObject({ requestsPerMinute: 100, tokensPerMinute: 2_120 });
    await board.recompute();
    const signals = board.signals(TARGET_ID);
    // p95 is the 95th of 100 samples: half-way into the bin that holds the slowest ten.
    expect(signals.ttftP95Ms).toBeCloseTo(250 + 0.5 * 250, 5);
    expect(signals.latencyP95Ms).toBeCloseTo(2_500 + 0.5 * 2_500, 5);
    expect(signals).toMatchObject({ state: 'healthy', inflight: 0, requestsPerMinute: 100 });
    expect(board.signals(MODEL_ID)).toEqual(signals);

    // 40 s later the window (30 s) no longer holds them, the last minute does; new ones add live.
    clock.now += 40_000;
    board.record(TARGET, { failure: false, latencyMs: 20, ttftMs: 20, tokens: 18 });
    await board.recompute();
    board.record(TARGET, { failure: false, latencyMs: 20, ttftMs: 20, tokens: 18 });
    expect(board.signals(TARGET_ID)).toMatchObject({ requestsPerMinute: 102, tokensPerMinute: 2_156 });
    expect(board.snapshot()[0]!.targets[0]!.requests).toBe(1);
    expect(board.signals(TARGET_ID).ttftP95Ms).toBeLessThan(25);

    clock.now += 30_000;
    await board.recompute();
    expect(board.signals(TARGET_ID)).toMatchObject({ requestsPerMinute: 2, tokensPerMinute: 36 });
  });

  it('knows nothing of a target nobody served: healthy, idle, no p95', () => {
    expect(boardAt({ now: 0 }).signals(MODEL_ID)).toEqual({
      state: 'healthy',
      latencyP95Ms: undefined,
      ttftP95Ms: undefined,
      inflight: 0,
      requestsPerMinute: 0,
      tokensPerMinute: 0,
      headroom: undefined,
    });
  });

  it('reads the headroom the keys leave under their rpm and tpm limits', async () => {
    const board = boardAt({ now: 1_000_000 });
    const limits: ProviderKeyLimits[] = [
      {
        provider: 'openai',
        keys: [
          { key: 'a', rpm: 10, models: [] },
          { key: 'b', rpm: 10, tpm: 1_000, models: ['gpt-4o'] },
          { key: 'free', models: [] },
        ],
      },
    ];
    board.publishLimits(() => limits);
    for (let index = 0; index < 5; index++) board.record(TARGET, { failure: false, tokens: 100 });
    board.record({ provider: 'openai', key: 'b', model: 'gpt-4o' }, { failure: false, tokens: 900 });
    await board.recompute();
    // A target by its key: 5 of 10 requests.
    expect(board.signals(TARGET_ID).headroom).toBeCloseTo(0.5, 5);
    // b: 1 of 10 requests, 900 of 1,000 tokens: the tokens are what runs out.
    expect(board.signals(healthId.target('openai', 'b', 'gpt-4o')).headroom).toBeCloseTo(0.1, 5);
    // The model over both keys: (20 − 6) / 20 requests, (1,000 − 900) / 1,000 tokens.
    expect(board.signals(MODEL_ID).headroom).toBeCloseTo(0.1, 5);
    // A model only a serves, never served: all its room.
    expect(board.signals(healthId.model('openai', 'gpt-4o-mini')).headroom).toBe(1);
    // Used up: 0, never below.
    for (let index = 0; index < 10; index++) board.record(TARGET, { failure: false, tokens: 1 });
    expect(board.signals(TARGET_ID).headroom).toBe(0);
    expect(board.signals(healthId.model('anthropic', 'claude')).headroom).toBeUndefined();
  });

  it('sums requests in flight of two router replicas: every replica and governance see it within a recompute', async () => {
    const clock = { now: Date.now() };
    const stores = await Promise.all([1, 2, 3].map(() => RedisStore.connect({ url, prefix })));
    const [first, second, reader] = [
      boardAt(clock, { store: stores[0]!, share: { replicaId: 'router-1', publish: true } }),
      boardAt(clock, { store: stores[1]!, share: { replicaId: 'router-2', publish: true } }),
      boardAt(clock, { store: stores[2]!, share: { replicaId: 'governance', publish: false } }),
    ];
    try {
      first.publishLimits(() => [{ provider: 'openai', keys: [{ key: 'a', rpm: 100, models: [] }] }]);
      const slowKey = { provider: 'openai', key: 'b', model: 'gpt-4o' };
      const ends = [
        first.begin(TARGET),
        first.begin(TARGET),
        first.begin(TARGET),
        second.begin(TARGET),
        second.begin(slowKey),
      ];
      for (let index = 0; index < 20; index++) {
        first.record(TARGET, { failure: false, latencyMs: 20, ttftMs: 20, tokens: 10 });
        second.record(slowKey, { failure: false, latencyMs: 2_000, ttftMs: 300, tokens: 10 });
      }
      for (const board of [first, second, first, reader]) await board.recompute();
      const seen = [first, second, reader].map((board) => board.signals(MODEL_ID));
      for (const signals of seen) {
        expect(signals).toEqual(seen[0]);
        expect(signals).toMatchObject({ inflight: 5, requestsPerMinute: 40, tokensPerMinute: 400 });
        expect(signals.ttftP95Ms).toBeGreaterThan(250);
        // Only router-1 serves key a, with a limit: 20 of its 100 requests used, wherever it is read.
        expect(signals.headroom).toBeCloseTo(0.8, 5);
      }
      expect(reader.signals(TARGET_ID)).toMatchObject({ inflight: 4, headroom: 0.8 });

      // Ended on router-1: there at once, on the others from its next recompute.
      ends[0]!();
      ends[0]!();
      ends[1]!();
      expect(first.signals(TARGET_ID).inflight).toBe(2);
      expect(reader.signals(TARGET_ID).inflight).toBe(4);
      for (const board of [first, second, reader]) await board.recompute();
      for (const board of [first, second, reader]) expect(board.signals(MODEL_ID).inflight).toBe(3);
      for (const end of ends) end();
    } finally {
      for (const board of [first, second, reader]) await board.close();
      for (const store of stores) await store.close();
    }
  });
});
