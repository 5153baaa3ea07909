import { describe, expect, it } from 'vitest';
import { fixed } from '../config/live.ts';
import { MemoryStore } from '../store/memory-store.ts';
import type { Store } from '../store/store.ts';
import { HealthBoard } from './health-board.ts';
import { healthId } from './health-id.ts';
import { loadBalancerConfigSchema } from './load-balancer-config.ts';

const config = loadBalancerConfigSchema.parse({
  window_ms: 30_000,
  bucket_ms: 1_000,
  min_samples: 20,
  probe_interval_ms: 5_000,
  recovery_ms: 30_000,
});
const GOOD = healthId.key('openai', 'good');
const FLAKY = healthId.key('openai', 'flaky');

/** A board on a clock the test moves. */
function boardAt(
  start = 1_000_000,
  options: { store?: Store; share?: { replicaId: string; publish: boolean } } = {},
) {
  const clock = { now: start };
  const board = new HealthBoard({ config: fixed(config), now: () => clock.now, ...options });
  return { board, clock };
}

/**
 * `count` requests to a key, `failures` of them failed, spread among them (never five in a row: these cases
 * judge by error rate, not by fast ejection, health-ejection.test.ts).
 */
function serve(board: HealthBoard, key: string, count: number, failures = 0) {
  const every = failures > 0 ? Math.floor(count / failures) : 0;
  for (let index = 0; index < count; index++) {
    const failure = failures > 0 && index % every === 0 && index / every < failures;
    board.record({ provider: 'openai', key, model: 'gpt-4o' }, { failure, latencyMs: 20 });
  }
}

/** The share of `draws` weighted choices a candidate gets, with evenly spread random numbers. */
function shareOf(board: HealthBoard, draws: number, index: number): number {
  const { weights } = board.weigh([
    { ids: [GOOD], weight: 1 },
    { ids: [FLAKY], weight: 1 },
  ]);
  const total = weights[0]! + weights[1]!;
  let chosen = 0;
  for (let draw = 0; draw < draws; draw++) {
    const point = ((draw + 0.5) / draws) * total;
    if ((index === 0 && point < weights[0]!) || (index === 1 && point >= weights[0]!)) chosen++;
  }
  return chosen / draws;
}

describe('HealthBoard', () => {
  it('keeps a target healthy below the minimum sample count, whatever its error rate', async () => {
    const { board } = boardAt();
    serve(board, 'flaky', 3, 1);
    await board.recompute();
    expect(board.stateOf(FLAKY)).toBe('healthy');
  });

  it('a key at 3 % errors is Degraded and gets less traffic than its healthy twin', async () => {
    const { board } = boardAt();
    serve(board, 'good', 100);
    serve(board, 'flaky', 100, 3);
    await board.recompute();
    expect(board.stateOf(FLAKY)).toBe('degraded');
    expect(board.stateOf(GOOD)).toBe('healthy');
    const share = shareOf(board, 1_000, 1);
    expect(share).toBeLessThan(0.45);
    expect(share).toBeGreaterThan(0.2);
    const report = board.snapshot()[0]!.keys.find((key) => key.id === 'flaky')!;
    expect(report).toMatchObject({ state: 'degraded', requests: 100, failures: 3, error_rate: 0.03 });
    expect(report.transitions).toEqual([{ from: 'healthy', to: 'degraded', at: 1_000_000 }]);
  });

  it('a key at 10 % errors is Failed: no traffic while another key serves, one probe per interval, then recovers and regains its share within 30 s', async () => {
    const { board, clock } = boardAt();
    serve(board, 'good', 100);
    serve(board, 'flaky', 100, 10);
    await board.recompute();
    expect(board.stateOf(FLAKY)).toBe('failed');
    const candidates = [
      { ids: [GOOD], weight: 1 },
      { ids: [FLAKY], weight: 1 },
    ];
    // Half-open: nothing until a probe interval has passed since the failure, then one probe per interval.
    for (let index = 0; index < 50; index++)
      expect(board.weigh(candidates)).toEqual({ weights: [1, 0], probe: undefined });
    clock.now += 5_000;
    expect(board.weigh(candidates).probe).toBe(1);
    expect(board.weigh(candidates).probe).toBeUndefined();
    expect(board.weigh(candidates, { probe: false }).probe).toBeUndefined();
    clock.now += 5_000;
    expect(board.weigh(candidates, { probe: false }).probe).toBeUndefined();
    expect(board.weigh(candidates).probe).toBe(1);

    // Three probes succeed (one per interval): recovering, with a share that grows back.
    for (let probe = 0; probe < 3; probe++) {
      clock.now += 1_000;
      serve(board, 'flaky', 1);
      serve(board, 'good', 10);
    }
    clock.now += 1_000;
    await board.recompute();
    expect(board.stateOf(FLAKY)).toBe('recovering');
    const early = shareOf(board, 1_000, 1);
    expect(early).toBeLessThan(0.1);

    clock.now += 15_000;
    serve(board, 'flaky', 30);
    serve(board, 'good', 30);
    await board.recompute();
    expect(board.stateOf(FLAKY)).toBe('recovering');
    const midway = shareOf(board, 1_000, 1);
    expect(midway).toBeGreaterThan(early);

    // 30 s after the recovery began: healthy, the failures before it no longer held against it.
    clock.now += 15_000;
    serve(board, 'flaky', 30);
    serve(board, 'good', 30);
    await board.recompute();
    expect(board.stateOf(FLAKY)).toBe('healthy');
    expect(shareOf(board, 1_000, 1)).toBeGreaterThan(0.45);
    expect(
      board
        .snapshot()[0]!
        .keys.find((key) => key.id === 'flaky')!
        .transitions.map((t) => t.to),
    ).toEqual(['failed', 'recovering', 'healthy']);
  });

  it('a failed probe starts the count again', async () => {
    const { board, clock } = boardAt();
    serve(board, 'flaky', 100, 10);
    await board.recompute();
    clock.now += 2_000;
    serve(board, 'flaky', 2);
    serve(board, 'flaky', 1, 1);
    await board.recompute();
    clock.now += 2_000;
    serve(board, 'flaky', 2);
    await board.recompute();
    expect(board.stateOf(FLAKY)).toBe('failed');
    clock.now += 2_000;
    serve(board, 'flaky', 1);
    await board.recompute();
    expect(board.stateOf(FLAKY)).toBe('recovering');
  });

  it('a recovering target that fails again is Failed again', async () => {
    const { board, clock } = boardAt();
    serve(board, 'flaky', 100, 10);
    await board.recompute();
    clock.now += 2_000;
    serve(board, 'flaky', 3);
    await board.recompute();
    expect(board.stateOf(FLAKY)).toBe('recovering');
    clock.now += 1_000;
    serve(board, 'flaky', 10, 5);
    await board.recompute();
    expect(board.stateOf(FLAKY)).toBe('failed');
  });

  it('forgets what is older than the window', async () => {
    const { board, clock } = boardAt();
    serve(board, 'flaky', 100, 4);
    await board.recompute();
    expect(board.stateOf(FLAKY)).toBe('degraded');
    clock.now += 31_000;
    serve(board, 'flaky', 20);
    await board.recompute();
    expect(board.stateOf(FLAKY)).toBe('healthy');
    expect(board.snapshot()[0]!.keys[0]).toMatchObject({ requests: 20, failures: 0 });
  });

  it('orders a Failed target behind the others, and first for its probe', async () => {
    const { board, clock } = boardAt();
    board.record({ provider: 'anthropic', model: 'claude' }, { failure: false, latencyMs: 10 });
    for (let index = 0; index < 40; index++)
      board.record({ provider: 'openai', model: 'gpt-4o' }, { failure: true });
    await board.recompute();
    const ids = (target: { provider: string; model: string }) => [
      healthId.provider(target.provider),
      healthId.model(target.provider, target.model),
    ];
    const targets = [
      { provider: 'openai', model: 'gpt-4o' },
      { provider: 'anthropic', model: 'claude' },
    ];
    expect(board.order(targets, ids)).toEqual([targets[1], targets[0]]);
    clock.now += 5_000;
    expect(board.order(targets, ids)).toEqual(targets);
    expect(board.order(targets, ids)).toEqual([targets[1], targets[0]]);
    const reversed = [targets[1]!, targets[0]!];
    clock.now += 5_000;
    expect(board.order(reversed, ids)).toEqual(targets);
    // Every target Failed: the order stands; none is left out.
    for (let index = 0; index < 40; index++)
      board.record({ provider: 'anthropic', model: 'claude' }, { failure: true });
    await board.recompute();
    expect(board.order(targets, ids)).toEqual(targets);
    expect(board.order(reversed, ids)).toEqual(reversed);
  });

  it('weighs slow and busy targets lower, and nothing changes when disabled', async () => {
    const store = await MemoryStore.open({});
    const { board } = boardAt(1_000_000, { store });
    for (let index = 0; index < 50; index++) {
      board.record({ provider: 'openai', key: 'good' }, { failure: false, latencyMs: 20 });
      board.record({ provider: 'openai', key: 'flaky' }, { failure: false, latencyMs: 200 });
    }
    board.setLoad('openai', 5, 10);
    await board.recompute();
    const [good, slow] = board.weigh([
      { ids: [GOOD], weight: 1 },
      { ids: [FLAKY], weight: 1 },
    ]).weights;
    expect(good).toBeCloseTo(1 - 0.15 * 0.5, 5);
    expect(slow).toBeCloseTo(1 - 0.2 - 0.15 * 0.5, 5);
    expect(board.snapshot()[0]!.utilization).toBe(0.5);

    await store.put('settings', 'load-balancer', { ...config, enabled: false });
    await board.recompute();
    expect(board.weigh([{ ids: [FLAKY], weight: 2 }]).weights).toEqual([2]);
    await store.close();
  });

  it('replicas sharing one store reach the same view within one recompute', async () => {
    const store = await MemoryStore.open({});
    const now = () => 1_000_000;
    const first = new HealthBoard({
      config: fixed(config),
      now,
      store,
      share: { replicaId: 'r1', publish: true },
    });
    const second = new HealthBoard({
      config: fixed(config),
      now,
      store,
      share: { replicaId: 'r2', publish: true },
    });
    const reader = new HealthBoard({
      config: fixed(config),
      now,
      store,
      share: { replicaId: 'governance', publish: false },
    });
    // Neither replica alone has enough failures to judge; together they are above 5 %.
    serve(first, 'flaky', 60, 2);
    serve(second, 'flaky', 60, 5);
    await first.recompute();
    await second.recompute();
    await first.recompute();
    await reader.recompute();
    for (const board of [first, second, reader]) {
      expect(board.stateOf(FLAKY)).toBe('failed');
      expect(board.snapshot()[0]!.keys[0]).toMatchObject({ requests: 120, failures: 7 });
    }
    await store.close();
  });

  it('routes on the last view when the store cannot be reached', async () => {
    const store = await MemoryStore.open({});
    const { board } = boardAt(1_000_000, { store, share: { replicaId: 'r1', publish: true } });
    serve(board, 'flaky', 100, 10);
    serve(board, 'good', 100);
    await board.recompute();
    expect(board.stateOf(FLAKY)).toBe('failed');
    const broken = new Error('connection refused');
    store.get = async () => Promise.reject(broken);
    store.put = async () => Promise.reject(broken);
    store.list = async () => Promise.reject(broken);
    await expect(board.recompute()).resolves.toBeUndefined();
    expect(board.stateOf(FLAKY)).toBe('failed');
    board.weigh([{ ids: [FLAKY], weight: 1 }]);
    expect(
      board.weigh([
        { ids: [GOOD], weight: 1 },
        { ids: [FLAKY], weight: 1 },
      ]).weights,
    ).toEqual([1, 0]);
  });

  it('refuses a config whose thresholds or weights do not add up, naming the field', () => {
    const degraded = loadBalancerConfigSchema.safeParse({
      degraded_error_rate: 0.1,
      failed_error_rate: 0.05,
    });
    expect(degraded.error?.issues[0]?.path).toEqual(['degraded_error_rate']);
    const weights = loadBalancerConfigSchema.safeParse({ score_weights: { error_rate: 0.9 } });
    expect(weights.error?.issues[0]?.path).toEqual(['score_weights']);
  });
});

describe('an untried provider', () => {
  it('is listed healthy with its keys before its first call, beside one that has served', async () => {
    const { board, clock } = boardAt();
    board.publishLimits(() => [
      { provider: 'openai', keys: [{ key: 'good', models: [] }] },
      { provider: 'anthropic', keys: [{ key: 'main', rpm: 10, models: [] }] },
    ]);
    clock.now += 5_000;
    serve(board, 'good', 3);
    await board.recompute();
    const [anthropic, openai] = board.snapshot();
    expect(anthropic).toMatchObject({
      provider: 'anthropic',
      state: 'healthy',
      since: 1_000_000,
      requests: 0,
      score: 1,
      keys: [{ id: 'main', state: 'healthy', requests: 0 }],
      models: [],
      targets: [],
    });
    expect(openai?.provider).toBe('openai');
    expect(openai?.keys).toEqual([expect.objectContaining({ id: 'good', requests: 3 })]);
  });
});
