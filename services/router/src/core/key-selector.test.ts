import { fixed } from '@gw/shared';
import { HealthBoard, loadBalancerConfigSchema } from '@gw/shared/health';
import { describe, expect, it } from 'vitest';
import { type SelectableKey, selectKey } from './key-selector.ts';

const key = (id: string, weight: number, models: string[] = []): SelectableKey => ({
  id,
  value: id,
  weight,
  models,
  config: {},
});

describe('selectKey', () => {
  const keys = [key('a', 3), key('b', 1), key('mini-only', 5, ['gpt-4o-mini'])];

  it('chooses by weight among keys that may serve the model', () => {
    const counts: Record<string, number> = {};
    let seed = 0;
    const random = () => {
      seed = (seed * 9301 + 49297) % 233280;
      return seed / 233280;
    };
    for (let index = 0; index < 4000; index++) {
      const chosen = selectKey(
        keys,
        { model: 'gpt-4o', excluded: new Set() },
        { provider: 'openai', random },
      )!;
      counts[chosen.id] = (counts[chosen.id] ?? 0) + 1;
    }
    expect(counts['mini-only']).toBeUndefined();
    expect(counts['a']! / counts['b']!).toBeGreaterThan(2.4);
    expect(counts['a']! / counts['b']!).toBeLessThan(3.8);
  });

  it('honours the key ids a virtual key allows, with * meaning all', () => {
    expect(
      selectKey(keys, { model: 'gpt-4o', allowedIds: ['b'], excluded: new Set() }, { provider: 'openai' })
        ?.id,
    ).toBe('b');
    expect(
      selectKey(
        keys,
        { model: 'gpt-4o', allowedIds: ['*'], excluded: new Set(['a']) },
        { provider: 'openai' },
      )?.id,
    ).toBe('b');
    expect(
      selectKey(
        keys,
        { model: 'gpt-4o', allowedIds: ['mini-only'], excluded: new Set() },
        { provider: 'openai' },
      ),
    ).toBeUndefined();
  });

  it('avoids rotated-out keys while another remains, then falls back to them', () => {
    expect(selectKey(keys, { model: 'gpt-4o', excluded: new Set(['a']) }, { provider: 'openai' })?.id).toBe(
      'b',
    );
    expect(['a', 'b']).toContain(
      selectKey(keys, { model: 'gpt-4o', excluded: new Set(['a', 'b']) }, { provider: 'openai' })?.id,
    );
  });

  it('skips keys of weight zero', () => {
    expect(
      selectKey([key('off', 0), key('on', 1)], { model: 'x', excluded: new Set() }, { provider: 'openai' })
        ?.id,
    ).toBe('on');
  });
});

describe('selectKey with health', () => {
  const keys = [key('good', 1), key('flaky', 1)];
  const selection = { model: 'gpt-4o', excluded: new Set<string>() };

  it('leaves a key Failed for the model out, save for one probe per interval', async () => {
    let now = 1_000_000;
    const health = new HealthBoard({
      config: fixed(loadBalancerConfigSchema.parse({ probe_interval_ms: 5_000 })),
      now: () => now,
    });
    for (let index = 0; index < 100; index++) {
      health.record({ provider: 'openai', key: 'good', model: 'gpt-4o' }, { failure: false, latencyMs: 10 });
      health.record(
        { provider: 'openai', key: 'flaky', model: 'gpt-4o' },
        { failure: index < 10, latencyMs: 10 },
      );
    }
    await health.recompute();
    const choose = () =>
      Array.from(
        { length: 200 },
        (_, index) =>
          selectKey(keys, selection, { provider: 'openai', health, random: () => (index % 100) / 100 })?.id,
      );
    expect(choose().every((id) => id === 'good')).toBe(true);
    now += 5_000;
    const chosen = choose();
    expect(chosen[0]).toBe('flaky');
    expect(chosen.slice(1).every((id) => id === 'good')).toBe(true);
    // Failed for gpt-4o only: for another model the key serves its share.
    const other = Array.from(
      { length: 100 },
      (_, index) =>
        selectKey(
          keys,
          { ...selection, model: 'gpt-4o-mini' },
          {
            provider: 'openai',
            health,
            random: () => index / 100,
          },
        )?.id,
    );
    expect(other.filter((id) => id === 'flaky').length).toBe(50);
  });
});

describe('selectKey with an affinity (cache_affinity)', () => {
  const four = [key('k1', 1), key('k2', 1), key('k3', 1), key('k4', 1)];
  const affinities = Array.from({ length: 4000 }, (_, index) => `prefix-${index}`);
  const choose = (
    keys: readonly SelectableKey[],
    affinity: string,
    selection: Partial<{ excluded: Set<string>; health: HealthBoard }> = {},
  ) =>
    selectKey(
      keys,
      { model: 'gpt-4o', excluded: selection.excluded ?? new Set(), affinity },
      { provider: 'openai', health: selection.health, random: () => 0 },
    )?.id;
  const shares = (keys: readonly SelectableKey[]) => {
    const counts: Record<string, number> = {};
    for (const affinity of affinities) {
      const id = choose(keys, affinity)!;
      counts[id] = (counts[id] ?? 0) + 1;
    }
    return counts;
  };

  it('sends one affinity to one key, whatever the random source says', () => {
    for (const affinity of affinities.slice(0, 50)) {
      const chosen = choose(four, affinity);
      const again = selectKey(
        four,
        { model: 'gpt-4o', excluded: new Set(), affinity },
        { provider: 'openai', random: () => 0.999 },
      )?.id;
      expect(again).toBe(chosen);
      // The order the keys are listed in does not matter either.
      expect(choose([...four].reverse(), affinity)).toBe(chosen);
    }
  });

  it('spreads affinities over keys in proportion to their weights', () => {
    const even = shares(four);
    for (const id of ['k1', 'k2', 'k3', 'k4']) {
      expect(even[id]! / affinities.length).toBeGreaterThan(0.22);
      expect(even[id]! / affinities.length).toBeLessThan(0.28);
    }
    const weighted = shares([key('heavy', 3), key('light', 1)]);
    expect(weighted['heavy']! / affinities.length).toBeGreaterThan(0.72);
    expect(weighted['heavy']! / affinities.length).toBeLessThan(0.78);
  });

  it('moves only the departed key’s affinities when a key leaves, and only the newcomer’s share when one joins', () => {
    const before = affinities.map((affinity) => choose(four, affinity));
    const three = four.filter((candidate) => candidate.id !== 'k4');
    const after = affinities.map((affinity) => choose(three, affinity));
    for (const [index, id] of before.entries()) {
      if (id !== 'k4') expect(after[index]).toBe(id);
    }
    const five = [...four, key('k5', 1)];
    const joined = affinities.map((affinity) => choose(five, affinity));
    const moved = joined.filter((id, index) => id !== before[index]);
    expect(moved.every((id) => id === 'k5')).toBe(true);
    expect(moved.length / affinities.length).toBeGreaterThan(0.16);
    expect(moved.length / affinities.length).toBeLessThan(0.24);
  });

  it('fails over to the affinity’s next key when its key was rotated out, the same for every retry', () => {
    for (const affinity of affinities.slice(0, 50)) {
      const first = choose(four, affinity)!;
      const second = choose(four, affinity, { excluded: new Set([first]) });
      expect(second).not.toBe(first);
      expect(choose(four, affinity, { excluded: new Set([first]) })).toBe(second);
      // The next key is the one the affinity would meet were the first key gone.
      expect(second).toBe(
        choose(
          four.filter((candidate) => candidate.id !== first),
          affinity,
        ),
      );
    }
  });

  it('leaves a key Failed for the model out, save for its probe, moving only its affinities', async () => {
    let now = 1_000_000;
    const health = new HealthBoard({
      config: fixed(loadBalancerConfigSchema.parse({ probe_interval_ms: 5_000 })),
      now: () => now,
    });
    const sample = affinities.slice(0, 200);
    const owned = sample.filter((affinity) => choose(four, affinity) === 'k2');
    expect(owned.length).toBeGreaterThan(0);
    for (let index = 0; index < 100; index++) {
      for (const id of ['k1', 'k2', 'k3', 'k4']) {
        health.record(
          { provider: 'openai', key: id, model: 'gpt-4o' },
          { failure: id === 'k2' && index < 10, latencyMs: 10 },
        );
      }
    }
    await health.recompute();
    expect(sample.map((affinity) => choose(four, affinity, { health })).includes('k2')).toBe(false);
    // Each affinity k2 held goes where it would were k2 gone; the others stay.
    const withoutK2 = four.filter((candidate) => candidate.id !== 'k2');
    for (const affinity of sample) {
      expect(choose(four, affinity, { health })).toBe(choose(withoutK2, affinity));
    }
    now += 5_000;
    const probed = sample.map((affinity) => choose(four, affinity, { health }));
    expect(probed[0]).toBe('k2');
    expect(probed.slice(1).includes('k2')).toBe(false);
  });
});

describe('selectKey under rpm and tpm limits', () => {
  const limited = (id: string, limits: { rpmLimit?: number; tpmLimit?: number }): SelectableKey => ({
    ...key(id, 1),
    ...limits,
  });
  const serve = (health: HealthBoard, keyId: string, count: number, tokens = 0) => {
    for (let index = 0; index < count; index++) {
      health.record({ provider: 'openai', key: keyId, model: 'gpt-4o' }, { failure: false, tokens });
    }
  };
  const choices = (keys: SelectableKey[], health: HealthBoard, model = 'gpt-4o') =>
    new Set(
      Array.from(
        { length: 20 },
        (_, index) =>
          selectKey(
            keys,
            { model, excluded: new Set() },
            { provider: 'openai', health, random: () => index / 20 },
          )?.id,
      ),
    );

  it('leaves a key out once its use this minute reached its limit, while another has room', () => {
    const health = new HealthBoard({ config: fixed(loadBalancerConfigSchema.parse({})) });
    const keys = [limited('small', { rpmLimit: 3 }), limited('tokens', { tpmLimit: 1_000 }), key('free', 1)];
    expect(choices(keys, health)).toEqual(new Set(['small', 'tokens', 'free']));
    serve(health, 'small', 3);
    serve(health, 'tokens', 1, 1_000);
    expect(choices(keys, health)).toEqual(new Set(['free']));
    // Limits hold per model: another model of the same keys has all its room.
    expect(choices(keys, health, 'gpt-4o-mini')).toEqual(new Set(['small', 'tokens', 'free']));
  });

  it('keeps every key when none has room (the least bad choice is still a key)', () => {
    const health = new HealthBoard({ config: fixed(loadBalancerConfigSchema.parse({})) });
    const keys = [limited('one', { rpmLimit: 1 }), limited('two', { rpmLimit: 1 })];
    serve(health, 'one', 1);
    expect(choices(keys, health)).toEqual(new Set(['two']));
    serve(health, 'two', 1);
    expect(choices(keys, health)).toEqual(new Set(['one', 'two']));
  });
});
