import { describe, expect, it } from 'vitest';
import { wholeAnswer } from '../../testkit/src/cache-fixtures.ts';
import { type CacheBackend, MemoryCacheBackend, SemanticCache } from './index.ts';

const hash = 'c'.repeat(64);
const context = 'd'.repeat(64);

/** A backend whose Redis is gone: every call fails. */
const broken: CacheBackend = {
  getByHash: () => Promise.reject(new Error('down')),
  nearest: () => Promise.reject(new Error('down')),
  put: () => Promise.reject(new Error('down')),
  deleteEntry: () => Promise.reject(new Error('down')),
  deleteByHash: () => Promise.reject(new Error('down')),
  clearScope: () => Promise.reject(new Error('down')),
  close: async () => undefined,
};

describe('SemanticCache', () => {
  it('fails open: a backend that fails makes lookups miss and stores report, never throw', async () => {
    const errors: unknown[] = [];
    const cache = new SemanticCache({ backend: broken, onError: (error) => errors.push(error) });
    expect(await cache.lookup({ scope: 's', hash })).toBeUndefined();
    const outcome = await cache.store({
      scope: 's',
      hash,
      provider: 'p',
      model: 'm',
      answer: wholeAnswer('x'),
    });
    expect(outcome).toEqual({ stored: false, reason: 'backend_error', detail: 'down' });
    expect(errors).toHaveLength(2);
    expect(cache.stats()).toMatchObject({ lookupErrors: 1, misses: 1, storeErrors: 1, stores: 0 });
  });

  it('bounds the TTL a request asks for, and keys vectors only with a context', async () => {
    let clock = 1_000;
    const backend = new MemoryCacheBackend({ now: () => clock });
    const cache = new SemanticCache({ backend, now: () => clock, maxTtlMs: 10_000 });
    await cache.store({ scope: 's', hash, ttlMs: 1e12, provider: 'p', model: 'm', answer: wholeAnswer('x') });
    expect((await cache.lookup({ scope: 's', hash }))?.entry.expiresAt).toBe(11_000);
    await cache.store({
      scope: 's',
      hash: 'e'.repeat(64),
      vector: [1, 0],
      provider: 'p',
      model: 'm',
      answer: wholeAnswer('y'),
    });
    expect((await cache.lookup({ scope: 's', hash: 'e'.repeat(64) }))?.entry.vector).toBeUndefined();
    expect(await cache.lookup({ scope: 's', hash: 'f'.repeat(64), context, vector: [1, 0] })).toBeUndefined();
    clock += 10_000;
    expect(await cache.lookup({ scope: 's', hash })).toBeUndefined();
    await backend.close();
  });

  it('refuses an entry the backends could not keep, and takes the default TTL for one that is not a number', async () => {
    const backend = new MemoryCacheBackend();
    const cache = new SemanticCache({ backend });
    const answer = wholeAnswer('x');
    expect(await cache.store({ scope: 's', hash: 'not-a-hash', provider: 'p', model: 'm', answer })).toEqual({
      stored: false,
      reason: 'not_storable',
      detail: 'hash: a hex sha256',
    });
    expect(await cache.store({ scope: '', hash, provider: 'p', model: 'm', answer })).toMatchObject({
      stored: false,
    });
    const stored = await cache.store({
      scope: 's',
      hash,
      ttlMs: Number.NaN,
      provider: 'p',
      model: 'm',
      answer,
    });
    expect(stored.stored).toBe(true);
    const entry = (await cache.lookup({ scope: 's', hash }))?.entry;
    expect(entry && entry.expiresAt - entry.createdAt).toBe(300_000);
    expect(cache.stats()).toMatchObject({ refused: 2, stores: 1 });
    await backend.close();
  });

  it('ignores a vector with no direction, and clamps a threshold out of range', async () => {
    const backend = new MemoryCacheBackend();
    const cache = new SemanticCache({ backend });
    const stored = await cache.store({
      scope: 's',
      hash,
      context,
      vector: [0, 0],
      provider: 'p',
      model: 'm',
      answer: wholeAnswer('x'),
    });
    expect(stored.stored).toBe(true);
    await cache.store({
      scope: 's',
      hash: 'e'.repeat(64),
      context,
      vector: [3, 4],
      provider: 'p',
      model: 'm',
      answer: wholeAnswer('y'),
    });
    const probe = { scope: 's', hash: 'f'.repeat(64), context };
    expect(await cache.lookup({ ...probe, vector: [0, 0] })).toBeUndefined();
    // -5 is taken as 0: an orthogonal vector matches, an opposite one does not.
    expect((await cache.lookup({ ...probe, vector: [4, -3], threshold: -5 }))?.similarity).toBeCloseTo(0, 5);
    expect(await cache.lookup({ ...probe, vector: [-3, -4], threshold: -5 })).toBeUndefined();
    expect((await cache.lookup({ ...probe, vector: [3, 4], threshold: 7 }))?.similarity).toBeCloseTo(1, 5);
    await backend.close();
  });
});
