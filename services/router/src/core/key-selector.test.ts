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
