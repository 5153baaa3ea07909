// Fast ejection, recovery that follows the probes, and health per target (provider, key and model) with the
// provider, key and model views derived from it (issue 26 items 1–3).
import { describe, expect, it } from 'vitest';
import { fixed } from '../config/live.ts';
import { MemoryStore } from '../store/memory-store.ts';
import { HealthBoard } from './health-board.ts';
import { healthId } from './health-id.ts';
import { derivedState } from './health-state.ts';
import { loadBalancerConfigSchema } from './load-balancer-config.ts';

const config = loadBalancerConfigSchema.parse({ probe_interval_ms: 5_000, recovery_ms: 30_000 });
const BAD = healthId.model('bad', 'gpt-4o-mini');
const BAD_TARGET = healthId.target('bad', 'k1', 'gpt-4o-mini');
const OPENAI = healthId.model('openai', 'gpt-4o-mini');

function boardAt(options: { consecutive_failures?: number } = {}) {
  const clock = { now: 1_000_000 };
  const board = new HealthBoard({
    config: fixed({ ...config, ...options }),
    now: () => clock.now,
  });
  return { board, clock };
}

const fail = (board: HealthBoard, target: { provider: string; key?: string; model: string }, times = 1) => {
  for (let index = 0; index < times; index++) board.record(target, { failure: true });
};
const succeed = (
  board: HealthBoard,
  target: { provider: string; key?: string; model: string },
  latencyMs = 20,
) => board.record(target, { failure: false, latencyMs });

const bad = { provider: 'bad', key: 'k1', model: 'gpt-4o-mini' };
const plan = [
  { provider: 'bad', model: 'gpt-4o-mini' },
  { provider: 'openai', model: 'gpt-4o-mini' },
];
const modelIds = (target: { provider: string; model: string }) => [
  healthId.model(target.provider, target.model),
];

describe('fast ejection', () => {
  it('counts 5xx, timeouts and connection errors toward the streak, not a 429 (which neither adds nor ends it)', () => {
    const { board } = boardAt();
    for (let index = 0; index < 10; index++) board.record(bad, { failure: true, ejects: false });
    expect(board.stateOf(BAD_TARGET)).toBe('healthy');
    fail(board, bad, 4);
    board.record(bad, { failure: true, ejects: false });
    expect(board.stateOf(BAD_TARGET)).toBe('healthy');
    fail(board, bad);
    expect(board.stateOf(BAD_TARGET)).toBe('failed');
  });

  it('a target that fails 5 times in a row is Failed at once, without a recompute or min_samples', () => {
    const { board } = boardAt();
    succeed(board, { provider: 'openai', key: 'k', model: 'gpt-4o-mini' });
    fail(board, bad, 4);
    expect(board.stateOf(BAD_TARGET)).toBe('healthy');
    fail(board, bad);
    expect(board.stateOf(BAD_TARGET)).toBe('failed');
    // Its views follow at once: the provider's only key and model are out.
    expect(board.stateOf(BAD)).toBe('failed');
    expect(board.stateOf(healthId.provider('bad'))).toBe('failed');
    expect(board.stateOf(healthId.key('bad', 'k1'))).toBe('failed');
    expect(board.snapshot().find((report) => report.provider === 'bad')).toMatchObject({
      state: 'failed',
      weight_multiplier: 0,
    });
    // Out of every plan: behind its fallback, no share of a weighted choice.
    for (let index = 0; index < 100; index++) {
      expect(board.order(plan, modelIds)).toEqual([plan[1], plan[0]]);
      expect(
        board.weigh([
          { ids: [BAD], weight: 1 },
          { ids: [OPENAI], weight: 1 },
        ]).weights,
      ).toEqual([0, 1]);
    }
  });

  it('a success breaks the streak; consecutive_failures 0 turns fast ejection off', () => {
    const { board } = boardAt();
    for (let round = 0; round < 10; round++) {
      fail(board, bad, 4);
      succeed(board, bad);
    }
    expect(board.stateOf(BAD_TARGET)).toBe('healthy');
    const off = boardAt({ consecutive_failures: 0 }).board;
    fail(off, bad, 19);
    expect(off.stateOf(BAD_TARGET)).toBe('healthy');
  });

  it('an ejected target gets one probe per probe interval, first in its plan, whatever the request rate', () => {
    const { board, clock } = boardAt();
    fail(board, bad, 5);
    let probes = 0;
    for (let second = 0; second < 20; second++) {
      for (let request = 0; request < 100; request++) {
        if (board.order(plan, modelIds)[0] === plan[0]) probes++;
      }
      clock.now += 1_000;
    }
    // 20 s: probes at +5, +10, +15 and +20 s at most (the first one interval after the ejection).
    expect(probes).toBe(3);
  });
});

describe('recovery follows the probes', () => {
  it('successful probes move a Failed target to recovering at once, then the ramp gives its share back', async () => {
    const { board, clock } = boardAt();
    fail(board, bad, 5);
    const ejectedAt = clock.now;
    // A success of an attempt begun before the ejection is no probe.
    clock.now += 100;
    succeed(board, bad, 500);
    succeed(board, bad, 500);
    succeed(board, bad, 500);
    expect(board.stateOf(BAD_TARGET)).toBe('failed');
    for (let probe = 1; probe <= 3; probe++) {
      clock.now = ejectedAt + probe * 5_000;
      succeed(board, bad);
      expect(board.stateOf(BAD_TARGET)).toBe(probe < 3 ? 'failed' : 'recovering');
    }
    expect(board.stateOf(BAD)).toBe('recovering');
    const weights = () =>
      board.weigh([
        { ids: [BAD], weight: 1 },
        { ids: [OPENAI], weight: 1 },
      ]).weights[0]!;
    expect(weights()).toBeLessThan(0.1);
    clock.now += 15_000;
    await board.recompute();
    expect(board.stateOf(BAD_TARGET)).toBe('recovering');
    expect(weights()).toBeGreaterThan(0.6);
    clock.now += 15_000;
    await board.recompute();
    expect(board.stateOf(BAD_TARGET)).toBe('healthy');
    expect(board.stateOf(healthId.provider('bad'))).toBe('healthy');
    expect(board.snapshot()[0]!.transitions.map((transition) => transition.to)).toEqual([
      'failed',
      'recovering',
      'healthy',
    ]);
  });

  it('a failed probe starts the count again; a recovering target failing 5 times in a row is ejected again', () => {
    const { board, clock } = boardAt();
    fail(board, bad, 5);
    clock.now += 5_000;
    succeed(board, bad);
    succeed(board, bad);
    fail(board, bad);
    succeed(board, bad);
    succeed(board, bad);
    expect(board.stateOf(BAD_TARGET)).toBe('failed');
    succeed(board, bad);
    expect(board.stateOf(BAD_TARGET)).toBe('recovering');
    fail(board, bad, 5);
    expect(board.stateOf(BAD_TARGET)).toBe('failed');
  });

  it('failures of attempts in flight when it was ejected do not send a recovered target back to Failed', async () => {
    const { board, clock } = boardAt();
    fail(board, bad, 5);
    const ejectedAt = clock.now;
    for (let probe = 1; probe <= 3; probe++) {
      clock.now = ejectedAt + probe * 5_000;
      succeed(board, bad);
    }
    expect(board.stateOf(BAD_TARGET)).toBe('recovering');
    // Ten calls begun just before the ejection (here or on another replica) time out only now, 20 s later.
    clock.now = ejectedAt + 19_900;
    for (let late = 0; late < 10; late++) board.record(bad, { failure: true, latencyMs: 20_000 });
    expect(board.stateOf(BAD_TARGET)).toBe('recovering');
    await board.recompute();
    expect(board.stateOf(BAD_TARGET)).toBe('recovering');
    expect(board.snapshot()[0]!.transitions.map((transition) => transition.to)).toEqual([
      'failed',
      'recovering',
    ]);
    // A failure of an attempt begun since still counts.
    fail(board, bad, 5);
    expect(board.stateOf(BAD_TARGET)).toBe('failed');
  });
});

describe('health per target (provider, key and model)', () => {
  it('one failing model leaves its provider, its key and its other models serving', () => {
    const { board } = boardAt();
    for (let index = 0; index < 30; index++) {
      succeed(board, { provider: 'openai', key: 'k1', model: 'gpt-4o' });
      fail(board, { provider: 'openai', key: 'k1', model: 'gpt-4o-mini' });
    }
    expect(board.stateOf(healthId.model('openai', 'gpt-4o-mini'))).toBe('failed');
    expect(board.stateOf(healthId.model('openai', 'gpt-4o'))).toBe('healthy');
    expect(board.stateOf(healthId.key('openai', 'k1'))).toBe('degraded');
    expect(board.stateOf(healthId.provider('openai'))).toBe('degraded');
    expect(board.snapshot()[0]!.targets.map(({ key, model, state }) => ({ key, model, state }))).toEqual([
      { key: 'k1', model: 'gpt-4o', state: 'healthy' },
      { key: 'k1', model: 'gpt-4o-mini', state: 'failed' },
    ]);
    const weighed = board.weigh(
      [
        { ids: [healthId.model('openai', 'gpt-4o')], weight: 1 },
        { ids: [healthId.model('anthropic', 'gpt-4o')], weight: 1 },
      ],
      { probe: false },
    );
    expect(weighed.weights).toEqual([1, 1]);
    // The provider is Failed only when every model (and key) of it is.
    fail(board, { provider: 'openai', key: 'k1', model: 'gpt-4o' }, 5);
    expect(board.stateOf(healthId.provider('openai'))).toBe('failed');
  });

  it('a model one key fails for still serves on the other key: the model is out only when every key is', () => {
    const { board } = boardAt();
    fail(board, { provider: 'openai', key: 'k1', model: 'gpt-4o' }, 5);
    succeed(board, { provider: 'openai', key: 'k2', model: 'gpt-4o' });
    expect(board.stateOf(healthId.target('openai', 'k1', 'gpt-4o'))).toBe('failed');
    expect(board.stateOf(healthId.model('openai', 'gpt-4o'))).toBe('degraded');
    expect(board.stateOf(healthId.key('openai', 'k2'))).toBe('healthy');
    const keys = [
      { ids: [healthId.target('openai', 'k1', 'gpt-4o')], weight: 1 },
      { ids: [healthId.target('openai', 'k2', 'gpt-4o')], weight: 1 },
    ];
    expect(board.weigh(keys).weights).toEqual([0, 1]);
  });

  it('derives a view: Failed only when all are, recovering when all are Failed or recovering', () => {
    expect(derivedState([])).toBe('healthy');
    expect(derivedState(['failed', 'failed'])).toBe('failed');
    expect(derivedState(['failed', 'recovering'])).toBe('recovering');
    expect(derivedState(['failed', 'healthy'])).toBe('degraded');
    expect(derivedState(['degraded', 'healthy'])).toBe('degraded');
    expect(derivedState(['recovering', 'healthy'])).toBe('healthy');
  });
});

describe('ejection shared by every replica', () => {
  it('the other replicas and a reader hold a target out at their next recompute, and let it back when its prober recovers it', async () => {
    const store = await MemoryStore.open({});
    const clock = { now: 1_000_000 };
    const now = () => clock.now;
    const boards = [
      new HealthBoard({ config: fixed(config), now, store, share: { replicaId: 'r1', publish: true } }),
      new HealthBoard({ config: fixed(config), now, store, share: { replicaId: 'r2', publish: true } }),
      new HealthBoard({
        config: fixed(config),
        now,
        store,
        share: { replicaId: 'governance', publish: false },
      }),
    ] as const;
    const [first, second] = boards;
    const all = async () => {
      for (const board of boards) await board.recompute();
    };
    await all();
    fail(first, bad, 5);
    expect(first.stateOf(BAD)).toBe('failed');
    expect(second.stateOf(BAD)).toBe('healthy');
    expect(boards[2].stateOf(BAD)).toBe('healthy');
    await all();
    for (const board of boards) {
      expect(board.stateOf(BAD_TARGET)).toBe('failed');
      expect(board.stateOf(healthId.provider('bad'))).toBe('failed');
    }
    // The first replica's probes succeed: it recovers, and the others follow at their next recompute.
    for (let probe = 1; probe <= 3; probe++) {
      clock.now += 5_000;
      succeed(first, bad);
    }
    expect(first.stateOf(BAD_TARGET)).toBe('recovering');
    await all();
    for (const board of boards) expect(board.stateOf(BAD_TARGET)).toBe('recovering');
    await all();
    for (const board of boards) expect(board.stateOf(BAD_TARGET)).toBe('recovering');
    await store.close();
  });
});
