// The move of governance state from the one-`{gov}`-tag layout of earlier releases (redis-migration.ts), on one
// Redis and on a 3-master Redis Cluster: old-layout keys written as those releases wrote them, moved once (a
// second run, and a run after an interrupted one, count nothing twice), then read and changed by the store's own
// operations.
import { createHash } from 'node:crypto';
import { deleteRedisKeys, type RedisTopology, startRedisCluster, testRedisPrefix } from '@gw/testkit';
import { Cluster } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { journalShard } from './journal-shard.ts';
import { connectRedis, type RedisConnection } from './redis-connection.ts';
import type { OneTagMigrationPlan } from './redis-migration.ts';
import { RedisStore } from './redis-store.ts';

const serverUrl = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const root = testRedisPrefix();
const HOUR = 3_600_000;
let cluster: RedisTopology | undefined;

beforeAll(async () => {
  cluster = await startRedisCluster(3);
}, 60_000);
afterAll(async () => {
  await cluster?.stop();
  await deleteRedisKeys(serverUrl, root);
});

/** The old layout's counters, each with the owners governance finds for it. */
function oldCounters(now: number) {
  return [
    { key: 'b:bud-key:0', owners: ['key:vk1'], value: 1_500_000, expireAt: now + HOUR },
    { key: 'r:vk1:60000:0', owners: ['key:vk1'], value: 7, expireAt: now + HOUR },
    { key: 'b:bud-team:0', owners: ['team:t1'], value: 900, expireAt: now + 2 * HOUR },
    { key: 'b:bud-customer:0', owners: ['customer:c1'], value: 400, expireAt: now + 3 * HOUR },
    // One budget id held by two owners was one counter then: each owner's gets all of it.
    { key: 'b:bud-shared:0', owners: ['team:t1', 'customer:c1'], value: 30, expireAt: now + HOUR },
    // A deleted resource's: no owner, left where it is.
    { key: 'b:deleted:0', owners: [], value: 5, expireAt: now + HOUR },
  ];
}

/** What governance would decide: the owners above, and each payload marked as rewritten. */
function plan(now: number, fail?: (counterKey: string) => void): OneTagMigrationPlan {
  const owners = new Map(oldCounters(now).map(({ key, owners }) => [key, owners]));
  return {
    ownersOf: (counterKey) => {
      fail?.(counterKey);
      return owners.get(counterKey) ?? [];
    },
    payloadOf: (payload) => JSON.stringify({ ...JSON.parse(payload), owners: 'named' }),
  };
}

const topologies = [
  { name: 'one Redis', url: () => serverUrl },
  { name: 'a 3-master Redis Cluster', url: () => cluster!.url },
];

for (const topology of topologies) {
  describe(`the move from the one {gov} tag, on ${topology.name}`, () => {
    const opened: Array<{ close(): Promise<void> }> = [];
    let run = 0;
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((resource) => resource.close()));
    });

    /** A prefix of the test's own, the old layout written under it, a store and an admin connection. */
    async function setUp() {
      const prefix = `${root}${topology.name.length}:${++run}:`;
      const url = topology.url();
      const admin = connectRedis(url, {});
      opened.push({ close: async () => admin.disconnect() });
      const store = await RedisStore.connect({ url, prefix });
      opened.push(store);
      const now = Date.now();
      const old = (name: string) => `${prefix}{gov}${name}`;
      for (const counter of oldCounters(now)) {
        await admin.set(old(`counter:${counter.key}`), String(counter.value), 'PXAT', counter.expireAt);
      }
      // Open reservations as the old admission recorded them: '<alternative>\n<payload>' and a deadline.
      await admin.hset(
        old('reservations'),
        'res_open',
        '0\n{"plan":"open"}',
        'res_due',
        '-1\n{"plan":"due"}',
      );
      await admin.zadd(old('reservation-deadlines'), now + HOUR, 'res_open', now - 1_000, 'res_due');
      await admin.set(old('settled:res_settled'), '1', 'PX', 60_000);
      // What ingresses of the new release counted meanwhile: added to, the later expiry kept.
      const owned = (owner: string, key: string) => `${prefix}{${owner}}counter:${key}`;
      await admin.set(owned('team:t1', 'b:bud-team:0'), '50', 'PXAT', now + HOUR / 2);
      await admin.set(owned('customer:c1', 'b:bud-customer:0'), '20', 'PXAT', now + 5 * HOUR);
      return { prefix, admin, store, now, old, owned };
    }

    /** The owners' counters as the store reads them. */
    function countersOf(store: RedisStore, now: number) {
      const names = oldCounters(now).flatMap(({ key, owners }) => owners.map((owner) => ({ key, owner })));
      return store.readCounters(names);
    }
    const MOVED = [1_500_000, 7, 950, 420, 30, 30];

    it('moves each counter to its owners with the later expiry, and the open reservations to their shards; a second run changes nothing', async () => {
      const { prefix, admin, store, now, old, owned } = await setUp();
      const result = await store.migrateOneTagLayout(plan(now));
      expect(result).toEqual({
        ran: true,
        counters: 5,
        ownerCounters: 6,
        left: 1,
        reservations: 2,
        settledMarks: 1,
        resumed: 0,
        resharded: 0,
      });
      expect(await countersOf(store, now)).toEqual(MOVED);
      const expiry = (key: string) => admin.pexpiretime(key);
      expect(await expiry(owned('key:vk1', 'b:bud-key:0'))).toBe(now + HOUR);
      expect(await expiry(owned('team:t1', 'b:bud-team:0'))).toBe(now + 2 * HOUR);
      expect(await expiry(owned('customer:c1', 'b:bud-customer:0'))).toBe(now + 5 * HOUR);
      expect(await expiry(owned('customer:c1', 'b:bud-shared:0'))).toBe(now + HOUR);
      for (const { key, owners } of oldCounters(now)) {
        expect(await admin.exists(old(`counter:${key}`)), key).toBe(owners.length === 0 ? 1 : 0);
      }
      for (const name of ['reservations', 'reservation-deadlines', 'migration']) {
        expect(await admin.exists(old(name)), name).toBe(0);
      }
      expect(await store.readReservation('res_open')).toEqual({
        id: 'res_open',
        alternative: 0,
        payload: '{"plan":"open","owners":"named"}',
      });

      const before = await snapshot(admin, prefix);
      expect((await store.migrateOneTagLayout(plan(now))).ran).toBe(false);
      // A pass run again (its marker gone) finds nothing more to move.
      await admin.del(`${prefix}migrated:gov-tag`);
      expect(await store.migrateOneTagLayout(plan(now))).toMatchObject({
        ran: true,
        counters: 0,
        ownerCounters: 0,
        left: 1,
        reservations: 0,
      });
      expect(await snapshot(admin, prefix)).toEqual(before);
    });

    it("is what the store's operations then read and change: counters, refusals at a limit, a settle, the sweeper's list, a late admission", async () => {
      const { store, now } = await setUp();
      await store.migrateOneTagLayout(plan(now));
      const expireAtMs = now + HOUR;
      const requests = (limit: number) => ({
        required: [{ key: 'r:vk1:60000:0', owner: 'key:vk1', limit, need: 1, amount: 1, expireAtMs }],
        alternatives: [],
      });
      expect(await store.admit(requests(7))).toEqual({
        allowed: false,
        passing: [],
        failed: { group: -1, index: 0, current: 7 },
      });
      expect(await store.admit(requests(8))).toEqual({ allowed: true, passing: [] });
      const teamBudget = {
        key: 'b:bud-team:0',
        owner: 'team:t1',
        limit: 950,
        need: 1,
        amount: 1,
        expireAtMs,
      };
      expect(await store.admit({ required: [teamBudget], alternatives: [] })).toMatchObject({
        allowed: false,
        failed: { current: 950 },
      });

      expect((await store.dueReservations(Date.now(), 10)).map(({ id }) => id)).toEqual(['res_due']);
      const adjustment = { key: 'b:bud-key:0', owner: 'key:vk1', delta: -500_000, expireAtMs };
      expect(await store.settleReservation({ id: 'res_open', adjustments: [adjustment] })).toBe(true);
      expect(await store.settleReservation({ id: 'res_open', adjustments: [adjustment] })).toBe(false);
      expect(await store.readCounters([{ key: 'b:bud-key:0', owner: 'key:vk1' }])).toEqual([1_000_000]);
      expect(await store.readReservation('res_open')).toBeUndefined();
      // A request settled before the upgrade, admitted again late: nothing is counted again.
      expect(
        await store.admit({
          required: [],
          alternatives: [],
          reservation: { id: 'res_settled', deadlineMs: expireAtMs, payload: '{}' },
        }),
      ).toEqual({ allowed: true, passing: [], duplicate: true });
    });

    it('counts each counter once when a run stopped between counters is run again', async () => {
      const { admin, store, now, old } = await setUp();
      // Killed at the fourth counter with owners it looks at (whichever SCAN hands it): the three before are done.
      const owned = oldCounters(now).filter(({ owners }) => owners.length > 0);
      let looked = 0;
      let stoppedAt: string | undefined;
      const failing = plan(now, (counterKey) => {
        if (owned.some(({ key }) => key === counterKey) && ++looked === 4) {
          stoppedAt = counterKey;
          throw new Error('killed');
        }
      });
      await expect(store.migrateOneTagLayout(failing)).rejects.toThrow('killed');
      const remaining = [];
      for (const { key } of owned) if (await admin.exists(old(`counter:${key}`))) remaining.push(key);
      expect(remaining).toContain(stoppedAt);
      expect(owned.length - remaining.length).toBeGreaterThanOrEqual(3);
      expect(await store.readReservation('res_open')).toBeUndefined();

      const completed = await store.migrateOneTagLayout(plan(now));
      expect(completed).toMatchObject({ ran: true, counters: remaining.length, reservations: 2 });
      expect(await countersOf(store, now)).toEqual(MOVED);
      expect(await store.readReservation('res_open')).toMatchObject({ alternative: 0 });
      for (const { key } of owned) expect(await admin.exists(old(`counter:${key}`)), key).toBe(0);
    });

    it("counts each owner's share once when a run stopped between the owners of one counter is run again", async () => {
      const { admin, store, now, old, owned } = await setUp();
      // The customer's counter cannot be added to: the move of the shared budget stops after the team's.
      await admin.set(owned('customer:c1', 'b:bud-shared:0'), 'broken');
      await expect(store.migrateOneTagLayout(plan(now))).rejects.toThrow(/not an integer/);
      expect(await admin.exists(old('counter:b:bud-shared:0'))).toBe(0);
      expect(await admin.hlen(old('migration'))).toBe(1);
      expect(await store.readCounters([{ key: 'b:bud-shared:0', owner: 'team:t1' }])).toEqual([30]);

      await admin.del(owned('customer:c1', 'b:bud-shared:0'));
      expect(await store.migrateOneTagLayout(plan(now))).toMatchObject({ ran: true, resumed: 1 });
      expect(await countersOf(store, now)).toEqual(MOVED);
      expect(await admin.exists(old('migration'))).toBe(0);
    });
  });
}

/** The shard of the journal's 16 an earlier release recorded a reservation in: its id's SHA-1, modulo 16. */
function sixteenShard(id: string): number {
  return createHash('sha1').update(id).digest().readUInt32BE(0) % 16;
}

for (const topology of topologies) {
  describe(`the journal's move from 16 shards to 64, on ${topology.name}`, () => {
    const opened: Array<{ close(): Promise<void> }> = [];
    let run = 0;
    afterEach(async () => {
      await Promise.all(opened.splice(0).map((resource) => resource.close()));
    });

    it('moves each open reservation to the shard its id hashes to, finishes a killed pass, and moves nothing twice', async () => {
      const prefix = `${root}journal:${topology.name.length}:${++run}:`;
      const url = topology.url();
      const admin = connectRedis(url, {});
      opened.push({ close: async () => admin.disconnect() });
      const now = Date.now();
      const oldShard = (id: string) => `${prefix}{res:${sixteenShard(id)}}`;
      // Forty open reservations as the 16-shard release recorded them, every fourth one due.
      const ids = Array.from({ length: 40 }, (_, index) => `res_${index}`);
      for (const [index, id] of ids.entries()) {
        await admin.hset(`${oldShard(id)}reservations`, id, `0\n{"n":${index}}`);
        await admin.zadd(
          `${oldShard(id)}reservation-deadlines`,
          index % 4 === 0 ? now - 1_000 : now + HOUR,
          id,
        );
      }
      // One a killed pass had detached into its shard's outbox and not attached.
      await admin.hset(
        `${oldShard('res_killed')}migration`,
        'nonce-1',
        JSON.stringify({
          kind: 'reservation',
          id: 'res_killed',
          stored: '-1\n{"n":"killed"}',
          deadline: '0',
        }),
      );
      const moving = ids.filter((id) => journalShard(id) !== sixteenShard(id));
      expect(moving.length).toBeGreaterThan(20);

      const store = await RedisStore.connect({ url, prefix });
      opened.push(store);
      expect(await store.migrateOneTagLayout(plan(now))).toMatchObject({
        ran: true,
        resharded: moving.length,
        resumed: 1,
        reservations: 0,
      });
      // Each where the store looks for it now, as it was; none left where it was.
      for (const [index, id] of ids.entries()) {
        expect(await store.readReservation(id)).toEqual({ id, alternative: 0, payload: `{"n":${index}}` });
        const left = await admin.hexists(`${oldShard(id)}reservations`, id);
        expect(left, id).toBe(moving.includes(id) ? 0 : 1);
      }
      expect(await store.readReservation('res_killed')).toMatchObject({ payload: '{"n":"killed"}' });
      const due = (await store.dueReservations(now, 100)).map(({ id }) => id).sort();
      expect(due).toEqual([...ids.filter((_, index) => index % 4 === 0), 'res_killed'].sort());
      // Settled once where it is now.
      expect(await store.settleReservation({ id: moving[0]!, adjustments: [] })).toBe(true);
      expect(await store.settleReservation({ id: moving[0]!, adjustments: [] })).toBe(false);

      const before = await snapshot(admin, prefix);
      expect((await store.migrateOneTagLayout(plan(now))).ran).toBe(false);
      // A pass run again (its marker gone) finds nothing more to move.
      await admin.del(`${prefix}migrated:journal-shards-64`);
      expect(await store.migrateOneTagLayout(plan(now))).toMatchObject({
        ran: true,
        resharded: 0,
        resumed: 0,
      });
      expect(await snapshot(admin, prefix)).toEqual(before);
    });
  });
}

/** Every key under the prefix (but the migrations' markers and claims) with its value and expiry. */
async function snapshot(admin: RedisConnection, prefix: string): Promise<Record<string, unknown>> {
  const servers = admin instanceof Cluster ? admin.nodes('master') : [admin];
  const keys: string[] = [];
  for (const server of servers) {
    let cursor = '0';
    do {
      const [next, found] = await server.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 500);
      cursor = next;
      keys.push(...found);
    } while (cursor !== '0');
  }
  const state: Record<string, unknown> = {};
  for (const key of keys.sort()) {
    if (key.startsWith(`${prefix}migrated:`) || key.startsWith(`${prefix}claim:`)) continue;
    const type = await admin.type(key);
    const value =
      type === 'string'
        ? await admin.get(key)
        : type === 'hash'
          ? await admin.hgetall(key)
          : await admin.zrange(key, 0, -1, 'WITHSCORES');
    state[key] = { value, expireAt: await admin.pexpiretime(key) };
  }
  return state;
}
