import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { deleteRedisKeys, testRedisPrefix, wholeAnswer } from '../../../testkit/src/index.ts';
import { SemanticCache } from '../index.ts';
import { RedisCacheBackend } from './index.ts';

const url = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const prefix = testRedisPrefix();
const admin = new Redis(url);
const opened: RedisCacheBackend[] = [];

async function replica(
  onError?: (error: unknown) => void,
): Promise<{ backend: RedisCacheBackend; cache: SemanticCache }> {
  const backend = await RedisCacheBackend.connect({ url, prefix, ...(onError && { onError }) });
  opened.push(backend);
  return { backend, cache: new SemanticCache({ backend }) };
}

const hashOf = (letter: string) => letter.repeat(64);
const entryKey = (scope: string, hash: string) => `${prefix}cache:{${scope}}:h:${hash}`;
const stored = (scope: string, hash: string, ttlMs?: number) => ({
  scope,
  hash,
  context: hashOf('c'),
  vector: [1, 2, 3],
  provider: 'openai',
  model: 'gpt-4o-mini',
  answer: wholeAnswer('from Redis'),
  ...(ttlMs !== undefined && { ttlMs }),
});

describe('RedisCacheBackend across replicas', () => {
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((backend) => backend.close()));
  });

  it('keeps entries as Redis keys with the entry’s TTL, which Redis honours', async () => {
    const { cache } = await replica();
    await cache.store(stored('ttl', hashOf('a'), 400));
    const ttl = await admin.pttl(entryKey('ttl', hashOf('a')));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(400);
    expect(await admin.pttl(`${prefix}cache:{ttl}:ids`)).toBeGreaterThan(0);
    await sleep(500);
    expect(await admin.exists(entryKey('ttl', hashOf('a')))).toBe(0);
    expect(await cache.lookup({ scope: 'ttl', hash: hashOf('a') })).toBeUndefined();
  });

  it('fills a replica’s index from Redis when it starts', async () => {
    const { cache: writer } = await replica();
    await writer.store(stored('fill', hashOf('b')));
    const { cache: late } = await replica();
    expect((await late.lookup({ scope: 'fill', hash: hashOf('b') }))?.hit).toBe('exact');
    const similar = { scope: 'fill', hash: hashOf('f'), context: hashOf('c'), vector: [1, 2, 3.1] };
    expect((await late.lookup(similar))?.hit).toBe('semantic');
  });

  it('deletes from a backend that follows no changes (the admin API’s), and every replica’s index learns it', async () => {
    const { cache: serving } = await replica();
    const written = await serving.store(stored('admin', hashOf('d')));
    const deleter = await RedisCacheBackend.connect({ url, prefix, followChanges: false });
    opened.push(deleter);
    // It keeps no index: it never finds anything itself.
    expect(await deleter.getByHash('admin', hashOf('d'))).toBeUndefined();
    expect(written.stored && (await deleter.deleteEntry('admin', written.id))).toBe(true);
    await vi.waitFor(async () => {
      expect(await serving.lookup({ scope: 'admin', hash: hashOf('d') })).toBeUndefined();
    });
    await serving.store(stored('admin', hashOf('e')));
    expect(await deleter.clearScope('admin')).toBe(1);
    await vi.waitFor(async () => {
      expect(await serving.lookup({ scope: 'admin', hash: hashOf('e') })).toBeUndefined();
    });
  });

  it('reads everything again after its subscriber reconnects, so a notice lost meanwhile costs nothing', async () => {
    const { cache: writer } = await replica();
    const { cache: reader } = await replica();
    const clients = await admin.client('LIST');
    const sync = String(clients)
      .split('\n')
      .filter((line) => line.includes(`name=${prefix}cache-sync`))
      .map((line) => /id=(\d+)/.exec(line)?.[1]);
    expect(sync).toHaveLength(2);
    // Both subscribers go; the write's notice is published while they are away (they retry after 200 ms).
    for (const id of sync) await admin.client('KILL', 'ID', id!);
    await writer.store(stored('lost', hashOf('d')));
    await vi.waitFor(
      async () => expect((await reader.lookup({ scope: 'lost', hash: hashOf('d') }))?.hit).toBe('exact'),
      5_000,
    );
  });

  it('ignores a corrupt entry, reporting it, and forgets it', async () => {
    const errors: unknown[] = [];
    const { cache } = await replica((error) => errors.push(error));
    await cache.store(stored('corrupt', hashOf('e')));
    await admin.set(entryKey('corrupt', hashOf('e')), '{"id":"x","broken":true}', 'PX', 60_000);
    expect(await cache.lookup({ scope: 'corrupt', hash: hashOf('e') })).toBeUndefined();
    expect(String(errors[0])).toContain('A corrupt cache entry in Redis was ignored');
  });
});

afterAll(async () => {
  await admin.quit();
  await deleteRedisKeys(url, prefix);
});

describe('RedisCacheBackend.connect', () => {
  it('fails with a clear error, without credentials, when Redis is unreachable', async () => {
    await expect(
      RedisCacheBackend.connect({ url: 'redis://user:secret@127.0.0.1:1', prefix }),
    ).rejects.toThrow('Redis at redis://127.0.0.1:1 is unreachable for the cache');
  });
});
