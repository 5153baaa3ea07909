// RedisStore on the Redis topologies gw supports beyond one server, each real redis-server processes started
// here: the whole Store contract on a 3-master Redis Cluster and on a Sentinel-watched master; each owner's
// counters in its own slot, an admission across them; a Sentinel failover followed.
import { type RedisTopology, runStoreContract, startRedisCluster, startRedisSentinel } from '@gw/testkit';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AllowanceStore } from './allowance-store.ts';
import { RedisStore } from './redis-store.ts';

const prefix = `gw-test:${process.pid}:${Date.now()}:`;
let cluster: RedisTopology;
let sentinel: Awaited<ReturnType<typeof startRedisSentinel>>;

beforeAll(async () => {
  [cluster, sentinel] = await Promise.all([startRedisCluster(3), startRedisSentinel()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([cluster?.stop(), sentinel?.stop()]);
});

runStoreContract({
  name: 'RedisStore on Redis Cluster',
  create: () => RedisStore.connect({ url: cluster.url, prefix }),
});
runStoreContract({
  name: 'RedisStore through Sentinel',
  create: () => RedisStore.connect({ url: sentinel.url, prefix }),
});

describe('RedisStore on Redis Cluster', () => {
  it("keeps each owner's counters in its own slot, and admits and settles across them", async () => {
    const store = await RedisStore.connect({ url: cluster.url, prefix });
    const check = (key: string, owner: string, limit = 10) => ({
      key,
      owner,
      limit,
      need: 1,
      amount: 1,
      expireAtMs: Date.now() + 60_000,
    });
    const owners = ['team:1', 'customer:1', 'key:1'];
    const counters = [check('b:team:1', 'team:1'), check('b:customer:1', 'customer:1')];
    const alternative = check('r:key/openai:60000:0', 'key:1');
    const admitted = await store.admit({
      required: counters,
      alternatives: [[alternative]],
      reservation: { id: 'res-slot', deadlineMs: Date.now() + 60_000, payload: '{}' },
    });
    expect(admitted).toEqual({ allowed: true, passing: [0] });
    expect(
      await store.settleReservation({
        id: 'res-slot',
        adjustments: [{ key: 'b:team:1', owner: 'team:1', delta: 4, expireAtMs: Date.now() + 60_000 }],
      }),
    ).toBe(true);
    expect(await store.readCounters([...counters, alternative])).toEqual([5, 1, 1]);
    // A refusal by a later owner gives back what the earlier ones counted.
    const refused = await store.admit({
      required: [check('b:team:1', 'team:1'), check('b:customer:1', 'customer:1', 1)],
      alternatives: [],
    });
    expect(refused).toMatchObject({ allowed: false, failed: { group: -1, index: 1, current: 1 } });
    expect(await store.readCounters(counters)).toEqual([5, 1]);
    await store.put('virtual-keys', 'vk-1', { name: 'one' });
    await store.close();

    const admin = new Cluster([{ host: '127.0.0.1', port: cluster.ports[0]! }]);
    await new Promise((resolve) => admin.once('ready', resolve));
    try {
      const keys: string[] = [];
      for (const node of admin.nodes('master')) {
        keys.push(...(await node.keys(`${prefix}*`)));
      }
      for (const owner of owners)
        expect(keys).toContain(
          `${prefix}{${owner}}counter:${counters.concat(alternative).find((counter) => counter.owner === owner)!.key}`,
        );
      // The owners hash to different slots: the admission above crossed them.
      const slots = new Set(await Promise.all(owners.map((owner) => admin.cluster('KEYSLOT', `{${owner}}`))));
      expect(slots.size).toBe(owners.length);
      expect(keys.some((key) => /\{res:\d+\}settled:res-slot$/.test(key))).toBe(true);
      expect(keys).toContain(`${prefix}doc:virtual-keys`);
    } finally {
      admin.disconnect();
    }
  });
  it("admits exactly a limit from slices of two ingresses, over two owners' counters", async () => {
    const stores = await Promise.all(
      [0, 1].map(() => RedisStore.connect({ url: cluster.url, prefix: `${prefix}allow:` })),
    );
    const ingresses = stores.map((store) => new AllowanceStore({ store }));
    const expireAtMs = Date.now() + 3_600_000;
    const checks = [
      { key: 'r:key', owner: 'key:allow', limit: 600, need: 1, amount: 1, expireAtMs },
      { key: 'b:team', owner: 'team:allow', limit: 1_000_000, need: 1_000, amount: 1_000, expireAtMs },
    ];
    try {
      let admitted = 0;
      for (let wave = 0; wave < 20; wave++) {
        const answers = await Promise.all(
          Array.from({ length: 50 }, (_, index) =>
            ingresses[index % 2]!.admit({
              required: checks,
              alternatives: [],
              reservation: { id: `res-allow-${wave}-${index}`, deadlineMs: expireAtMs, payload: '{}' },
            }),
          ),
        );
        admitted += answers.filter((answer) => answer.allowed).length;
      }
      expect(admitted).toBe(600);
      expect(ingresses.reduce((sum, ingress) => sum + ingress.admissions().local, 0)).toBeGreaterThan(300);
      await Promise.all(ingresses.map((ingress) => ingress.close()));
      expect(await stores[0]!.readCounters(checks)).toEqual([600, 600_000]);
    } finally {
      await Promise.all(ingresses.map((ingress) => ingress.close()));
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it('admits in the same turn as reads of documents on every node (scripts are not pipelined by their key count)', async () => {
    const store = await RedisStore.connect({ url: cluster.url, prefix: `${prefix}turn:` });
    const check = (key: string) => ({
      key,
      limit: 1_000,
      need: 1,
      amount: 1,
      expireAtMs: Date.now() + 60_000,
    });
    try {
      for (let round = 0; round < 10; round++) {
        // The number of keys varies with the checks: the script's first argument hashes to every master too.
        const admitted = store.admit({
          required: Array.from({ length: round + 1 }, (_, index) => check(`b:team:turn${index}`)),
          alternatives: [],
          reservation: { id: `res-turn-${round}`, deadlineMs: Date.now() + 60_000, payload: '{}' },
        });
        // Right after the turn's batch is sent: documents whose keys hash to every master are read in the
        // same tick, so their commands join the auto-pipelines the script call is in.
        await new Promise((resolve) => setImmediate(resolve));
        const reads = Array.from({ length: 24 }, (_, index) => store.get(`spread-${index}`, `doc-${round}`));
        const settled = await Promise.allSettled([admitted, ...reads]);
        expect(settled.filter((outcome) => outcome.status === 'rejected')).toEqual([]);
      }
    } finally {
      await store.close();
    }
  });
});

describe('RedisStore through Sentinel', () => {
  it('follows a failover to the promoted replica, and keeps what was written before it', async () => {
    const store = await RedisStore.connect({ url: sentinel.url, prefix });
    await store.put('failover', 'before', { kept: true });
    const [first] = sentinel.sentinelPorts;
    const watcher = new Redis({ host: '127.0.0.1', port: first! });
    try {
      // The write reached the replica before the failover is asked for (replication is asynchronous).
      const replica = new Redis({ host: '127.0.0.1', port: sentinel.ports[1]! });
      await expect
        .poll(() => replica.hget(`${prefix}doc:failover`, 'before'), { timeout: 5_000 })
        .toBe('{"kept":true}');
      replica.disconnect();
      await watcher.call('SENTINEL', 'FAILOVER', 'gw-master');
      await expect
        .poll(
          async () =>
            ((await watcher.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', 'gw-master')) as string[])[1],
          {
            timeout: 15_000,
          },
        )
        .toBe(String(sentinel.ports[1]));
      // Commands may fail (503) while the connection moves, and a write the old master took in the moment
      // before it stepped down is lost (replication is asynchronous: README); then writes reach the new master.
      const promoted = new Redis({ host: '127.0.0.1', port: sentinel.ports[1]! });
      await expect
        .poll(
          async () => {
            await store.put('failover', 'after', { written: 'on the new master' }).catch(() => {});
            return promoted.hget(`${prefix}doc:failover`, 'after');
          },
          { timeout: 15_000, interval: 200 },
        )
        .toBe('{"written":"on the new master"}');
      expect(await store.get('failover', 'before')).toEqual({ kept: true });
      promoted.disconnect();
    } finally {
      watcher.disconnect();
      await store.close();
    }
  }, 40_000);
});
