import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { runStoreContract, startFreezableProxy, waitFor } from '../../../testkit/src/index.ts';
import { RedisStore } from './redis-store.ts';

const url = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const prefix = `gw-test:${process.pid}:${Date.now()}:`;
const admin = new Redis(url);

runStoreContract({ name: 'RedisStore', create: () => RedisStore.connect({ url, prefix }) });

describe('RedisStore', () => {
  it('skips a corrupt document instead of failing', async () => {
    const errors: unknown[] = [];
    const store = await RedisStore.connect({ url, prefix, onError: (error) => errors.push(error) });
    await store.put('corrupt', 'good', { fine: true });
    await admin.hset(`${prefix}doc:corrupt`, 'bad', '{not json');
    expect(await store.get('corrupt', 'bad')).toBeUndefined();
    expect(await store.list('corrupt')).toEqual([{ id: 'good', value: { fine: true } }]);
    expect(String(errors[0])).toContain(`${prefix}doc:corrupt bad`);
    await store.close();
  });

  it('answers a read whose timer fired while the event loop was busy, though the answer had arrived', async () => {
    const store = await RedisStore.connect({ url, prefix, commandTimeoutMs: 100 });
    await store.put('busy', 'one', { n: 1 });
    const read = store.get('busy', 'one');
    // Busy for longer than the command timeout: the answer arrives meanwhile, but the timer runs first.
    const until = Date.now() + 300;
    while (Date.now() < until) {}
    expect(await read).toEqual({ n: 1 });
    await store.close();
  });

  it("sets a counter's expiry when its key is made, and keeps it through later admissions and settles", async () => {
    const store = await RedisStore.connect({ url, prefix });
    const expireAtMs = Date.now() + 3_600_000;
    const check = (key: string, amount: number) => ({ key, limit: 1_000, need: amount, amount, expireAtMs });
    const ttl = (key: string) => admin.pttl(`${prefix}{gov}counter:${key}`);
    await store.admit({
      required: [check('ttl-a', 10)],
      alternatives: [],
      reservation: { id: 'ttl-1', deadlineMs: expireAtMs, payload: '{}' },
    });
    const first = await ttl('ttl-a');
    expect(first).toBeGreaterThan(3_500_000);
    await store.admit({ required: [check('ttl-a', 5)], alternatives: [] });
    expect(await ttl('ttl-a')).toBeGreaterThan(3_500_000);
    expect(await ttl('ttl-a')).toBeLessThanOrEqual(first);
    // A settle that makes a counter (a refund to a period whose key is gone) gives it an expiry too.
    await store.settleReservation({ id: 'ttl-1', adjustments: [{ key: 'ttl-b', delta: -3, expireAtMs }] });
    expect(await ttl('ttl-b')).toBeGreaterThan(3_500_000);
    expect(await store.readCounters(['ttl-a', 'ttl-b'])).toEqual([15, -3]);
    await store.close();
  });

  it('answers a request admitted before as a duplicate even when its owners are full now, counting nothing', async () => {
    const store = await RedisStore.connect({ url, prefix });
    const expireAtMs = Date.now() + 3_600_000;
    const id = `res-full-${Date.now()}`;
    const admit = () =>
      store.admit({
        required: [
          { key: `full-key-${id}`, owner: `key:${id}`, limit: 10, need: 1, amount: 1, expireAtMs },
          { key: `full-team-${id}`, owner: `team:${id}`, limit: 1, need: 1, amount: 1, expireAtMs },
        ],
        alternatives: [],
        reservation: { id, deadlineMs: expireAtMs, payload: 'p' },
      });
    expect(await admit()).toEqual({ allowed: true, passing: [] });
    // The team is full: the key's step counts, the team's refuses, the key's is given back, and the journal
    // says the request was admitted before.
    expect(await admit()).toEqual({ allowed: true, passing: [], duplicate: true });
    expect(
      await store.readCounters([
        { key: `full-key-${id}`, owner: `key:${id}` },
        { key: `full-team-${id}`, owner: `team:${id}` },
      ]),
    ).toEqual([1, 1]);
    await store.close();
  });

  it('answers 503, never a refusal, to a request asked again while its first admission stalled before recording it', async () => {
    // The first admission's process froze (SIGSTOP) after sending its step: the step runs on Redis, its answer
    // is never read, and the journal records nothing. The caller's deadline passes and it asks another process.
    const redis = new URL(url);
    const proxy = await startFreezableProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
    const frozen = await RedisStore.connect({
      url: `redis://127.0.0.1:${proxy.port}`,
      prefix,
      commandTimeoutMs: 30_000,
    });
    const other = await RedisStore.connect({ url, prefix });
    const expireAtMs = Date.now() + 3_600_000;
    const id = `res-stalled-${Date.now()}`;
    const counter = { key: `stalled-${id}`, owner: `key:${id}` };
    const request = {
      required: [{ ...counter, limit: 1_000_000, need: 100, amount: 100, expireAtMs }],
      alternatives: [],
      reservation: { id, deadlineMs: expireAtMs, payload: 'p' },
    };
    proxy.freeze('answers');
    const first = frozen.admit(request);
    await waitFor(async () => (await admin.exists(`${prefix}{key:${id}}taken:${id}`)) === 1);
    // No limit was reached: the retry is told the request's admission was interrupted, not that it was refused.
    await expect(other.admit(request)).rejects.toMatchObject({ type: 'service_unavailable', status: 503 });
    // Thawed, the first admission finds the request closed: it gives its step back and records nothing, so
    // nothing is counted and the sweeper has nothing to charge.
    proxy.thaw();
    expect(await first).toEqual({ allowed: true, passing: [], duplicate: true });
    expect(await other.readCounters([counter])).toEqual([0]);
    expect(await other.readReservation(id)).toBeUndefined();
    await Promise.all([frozen.close(), other.close()]);
    await proxy.close();
  });

  it("fails only the admission whose counter is broken when a turn's admissions run as one script call", async () => {
    const store = await RedisStore.connect({ url, prefix });
    const expireAtMs = Date.now() + 3_600_000;
    const check = (key: string) => ({ key, limit: 1_000, need: 1, amount: 1, expireAtMs });
    // Not a number: INCRBY on it fails inside the script.
    await admin.set(`${prefix}{gov}counter:broken`, 'not a number');
    const results = await Promise.allSettled([
      store.admit({ required: [check('batch-a')], alternatives: [] }),
      store.admit({ required: [check('broken')], alternatives: [] }),
      store.admit({ required: [check('batch-b')], alternatives: [] }),
    ]);
    expect(results.map((result) => result.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(String((results[1] as PromiseRejectedResult).reason)).toMatch(/arithmetic on field 'current'/);
    expect(await store.readCounters(['batch-a', 'batch-b'])).toEqual([1, 1]);
    await store.close();
  });

  it('fails to connect with a clear error when Redis is unreachable', async () => {
    await expect(RedisStore.connect({ url: 'redis://user:secret@127.0.0.1:1', prefix })).rejects.toThrow(
      /^Redis at redis:\/\/127\.0\.0\.1:1 is unreachable after \d+ attempts/,
    );
  });
});

afterAll(async () => {
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
    if (keys.length > 0) await admin.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  await admin.quit();
});
