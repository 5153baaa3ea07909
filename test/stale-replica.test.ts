// No replica stays stale (issue 17, items 6 and 7), against a real cluster (2 routers, 2 governance replicas):
// a change notice lost while the replicas' pub/sub connections were down is caught within a few seconds (a
// revoked key stops working on every replica), and a Redis that lost its data is noticed, reseeded from the
// config file and reported as an error.
import {
  type FakeOpenAi,
  type LaunchedCluster,
  scaled,
  startCluster,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, get, post } from './support/http.ts';

const ADMIN = { authorization: 'Bearer stale-admin' };
const CHAT = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
const CONFIG_KEY = 'sk-gw-staleconfig000000000000000000000000000';
const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';

describe('replicas that missed a change (cluster: 2 routers, 2 governance)', () => {
  let fake: FakeOpenAi;
  let cluster: LaunchedCluster;
  let redis: Redis;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    redis = new Redis(REDIS_URL);
    cluster = await startCluster({
      adminToken: 'stale-admin',
      replicas: { router: 2, governance: 2 },
      config: {
        client: { enforce_virtual_keys: true },
        providers: {
          openai: {
            keys: [{ value: 'sk-upstream' }],
            network_config: { base_url: fake.url, max_retries: 0 },
          },
        },
        governance: {
          virtual_keys: [
            {
              id: 'vk-config',
              name: 'config',
              value: CONFIG_KEY,
              provider_configs: [{ provider: 'openai' }],
            },
          ],
        },
      },
    });
  }, scaled(60_000));
  afterAll(async () => {
    await cluster?.close();
    await fake?.close();
    redis?.disconnect();
  });

  const chat = (key: string) =>
    post(`${cluster.url}/v1/chat/completions`, CHAT, { headers: { 'x-gw-vk': key } });

  /** Closes every pub/sub connection of this cluster's processes (they reconnect, having missed what came). */
  async function dropPubSub(): Promise<number> {
    const clients = String(await redis.call('CLIENT', 'LIST', 'TYPE', 'pubsub'));
    const ids = clients
      .split('\n')
      .filter((line) => line.includes(` name=${cluster.prefix}pubsub `))
      .map((line) => /\bid=(\d+)/.exec(line)?.[1])
      .filter((id): id is string => id !== undefined);
    for (const id of ids) await redis.client('KILL', 'ID', id);
    return ids.length;
  }

  it('a key revoked while the replicas’ notices were lost is refused everywhere within seconds', {
    timeout: scaled(30_000),
  }, async () => {
    const created = await post(
      `${cluster.adminUrl}/api/governance/virtual-keys`,
      { name: 'to-revoke', provider_configs: [{ provider: 'openai' }] },
      { headers: ADMIN },
    );
    expect(created.status).toBe(201);
    const key = created.body.value as string;
    for (let i = 0; i < 4; i++) expect((await chat(key)).status).toBe(200);

    // Every subscriber of the cluster is cut off (each process holds one); the revocation is published while
    // they reconnect, so no replica hears of it, not even the one that wrote it.
    expect(await dropPubSub()).toBeGreaterThanOrEqual(4);
    const revoked = await call(
      'PUT',
      `${cluster.adminUrl}/api/governance/virtual-keys/${created.body.id}`,
      { name: 'to-revoke', provider_configs: [{ provider: 'openai' }], is_active: false },
      ADMIN,
    );
    expect(revoked.status).toBe(200);
    const revokedAt = Date.now();

    // Refused by both governance replicas (four requests in a row, round robin) within the documented bound.
    await waitFor(
      async () => {
        const statuses = await Promise.all([0, 1, 2, 3].map(async () => (await chat(key)).status));
        return statuses.every((status) => status === 401 || status === 403);
      },
      { timeoutMs: 5_000, intervalMs: 100, what: 'the revoked key refused on every replica' },
    );
    const seconds = (Date.now() - revokedAt) / 1000;
    console.info(`revocation to refusal on every replica after lost notices: ${seconds.toFixed(2)} s`);
    expect(seconds).toBeLessThanOrEqual(5);
  });

  it('a Redis that lost its data is noticed: the config file is reseeded, the API-made keys written back from memory, and the loss reported', {
    timeout: scaled(30_000),
  }, async () => {
    expect((await chat(CONFIG_KEY)).status).toBe(200);
    // Issue 42: a key made through the admin API lived only in the store, so it answered 401 for good after.
    const made = await post(
      `${cluster.adminUrl}/api/governance/virtual-keys`,
      { name: 'made-before-the-loss', provider_configs: [{ provider: 'openai' }] },
      { headers: ADMIN },
    );
    expect(made.status).toBe(201);
    const { id: madeId, value: madeKey } = made.body as { id: string; value: string };
    await waitFor(async () => (await chat(madeKey)).status === 200, { what: 'the API-made key serves' });
    // What a Redis restarted without persistence holds: nothing (only this cluster's keys are removed here, so
    // other suites sharing the server keep theirs).
    const keys = await redis.keys(`${cluster.prefix}*`);
    expect(keys.length).toBeGreaterThan(0);
    await redis.del(...keys);
    const lostAt = Date.now();

    // The admin API lists the config file's provider and key again, and the key works on every replica.
    await waitFor(
      async () => {
        const providers = await get(`${cluster.adminUrl}/api/providers`, ADMIN);
        const keyRead = await get(`${cluster.adminUrl}/api/governance/virtual-keys/vk-config`, ADMIN);
        return (
          providers.status === 200 &&
          JSON.stringify(providers.body).includes('"openai"') &&
          keyRead.status === 200
        );
      },
      // The check runs every second; 15 s leaves room for a machine whose cores are all busy. (This wait once
      // timed out now and then: a governance replica's reseed failed on the key it still held in memory, and
      // was never tried again; the admin reads polled here often cleared that memory first, hiding it.)
      { timeoutMs: 15_000, intervalMs: 100, what: 'the config file reseeded' },
    );
    const statuses = await Promise.all([0, 1, 2, 3].map(async () => (await chat(CONFIG_KEY)).status));
    expect(statuses).toEqual([200, 200, 200, 200]);
    await waitFor(
      async () =>
        (await get(`${cluster.adminUrl}/api/governance/virtual-keys/${madeId}`, ADMIN)).status === 200,
      { timeoutMs: 15_000, what: 'the API-made key written back' },
    );
    const madeStatuses = await Promise.all([0, 1, 2, 3].map(async () => (await chat(madeKey)).status));
    expect(madeStatuses).toEqual([200, 200, 200, 200]);
    expect(await redis.exists(`${cluster.prefix}epoch`)).toBe(1);
    expect(cluster.output()).toContain('the state store lost its data');
    console.info(`Redis data loss to reseeded config: ${((Date.now() - lostAt) / 1000).toFixed(2)} s`);
  });
});
