// `/api/cache/scopes/…` over the memory backend: what each removal answers, and the errors of the paths around it.
import { callerKeyHash, MemoryCacheBackend, SemanticCache } from '@gw/cache';
import { wholeAnswer } from '@gw/testkit';
import { describe, expect, it } from 'vitest';
import { routeCaller } from '../../testing/admin-harness.ts';
import { createCacheAdmin } from './cache-admin.ts';

async function setup() {
  const backend = new MemoryCacheBackend();
  const cache = new SemanticCache({ backend });
  const store = async (scope: string, hash: string) => {
    const outcome = await cache.store({
      scope,
      hash,
      provider: 'openai',
      model: 'm',
      answer: wholeAnswer('x'),
    });
    if (!outcome.stored) throw new Error(outcome.detail);
    return outcome.id;
  };
  return { admin: routeCaller(createCacheAdmin({ backend })), store, cache };
}

describe('cache admin', () => {
  it('removes an entry by id, the entry of a cache key or of an exact hash, and a whole scope', async () => {
    const { admin, store, cache } = await setup();
    const id = await store('vk:a', 'a'.repeat(64));
    await store('vk:a', callerKeyHash('report-2026'));
    await store('vk:a', 'b'.repeat(64));
    await store('vk:a', 'c'.repeat(64));
    await store('vk:b', 'c'.repeat(64));
    expect(await admin('DELETE', `/api/cache/scopes/vk%3Aa/entries/${id}`)).toEqual({
      status: 200,
      body: { scope: 'vk:a', id, removed: 1 },
    });
    expect(await admin('DELETE', '/api/cache/scopes/vk:a/keys/report-2026')).toEqual({
      status: 200,
      body: { scope: 'vk:a', key: 'report-2026', removed: 1 },
    });
    expect((await admin('DELETE', `/api/cache/scopes/vk:a/keys/${'b'.repeat(64)}`)).body).toEqual({
      scope: 'vk:a',
      key: 'b'.repeat(64),
      removed: 1,
    });
    expect(await admin('DELETE', '/api/cache/scopes/vk:a')).toEqual({
      status: 200,
      body: { scope: 'vk:a', removed: 1 },
    });
    // Another scope's entry of the same hash is untouched.
    expect(await cache.lookup({ scope: 'vk:b', hash: 'c'.repeat(64) })).toMatchObject({ hit: 'exact' });
  });

  it('answers 404 for what is not there, 405 for other methods, and says when the cache is off', async () => {
    const { admin } = await setup();
    await expect(admin('DELETE', '/api/cache/scopes/vk:a/entries/nope')).rejects.toMatchObject({
      type: 'not_found',
    });
    await expect(admin('DELETE', '/api/cache/scopes/vk:a/keys/nope')).rejects.toMatchObject({
      type: 'not_found',
    });
    await expect(admin('GET', '/api/cache/scopes/vk:a')).rejects.toMatchObject({
      type: 'method_not_allowed',
    });
    for (const path of ['/api/cache', '/api/cache/scopes/vk:a/entries', '/api/cache/scopes/vk:a/other/x']) {
      await expect(admin('DELETE', path)).rejects.toMatchObject({ type: 'not_found' });
    }
    const off = routeCaller(createCacheAdmin({}));
    await expect(off('DELETE', '/api/cache/scopes/vk:a')).rejects.toThrow(/cache\.enabled/);
  });
});
