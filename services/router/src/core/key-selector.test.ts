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
