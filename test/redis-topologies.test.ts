// The gw cluster on the Redis topologies beyond one server (issue 11, item 11), each made of real redis-server
// processes started here: on a 3-master Redis Cluster a burst against a rate limit admits exactly the limit and
// every served request is charged once; through Sentinel, a failover under a steady load costs a few 503s for
// about a second and the charges afterwards match what was served, less what the docs say a failover loses.
import {
  type FakeOpenAi,
  type LaunchedCluster,
  type RedisTopology,
  SENTINEL_MASTER,
  scaled,
  startCluster,
  startFakeOpenAi,
  startRedisCluster,
  startRedisSentinel,
  waitFor,
} from '@gw/testkit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post } from './support/http.ts';
import { charged, type Outcome, steadyLoad } from './support/steady-load.ts';

const ADMIN = { authorization: 'Bearer topology-admin' };
const CHAT = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 7 };
/** The fake answers 18 tokens; at $1,000 per million tokens a request costs $0.018. */
const COST = 0.018;
/**
 * What admission reserves for one request, and what stays charged when its settle is lost: the prompt at
 * gw's estimate (3 tokens priming the reply, 4 framing the message, 1 for its two characters) and max_tokens,
 * at $1,000 per million tokens.
 */
const RESERVE = (3 + 4 + 1 + CHAT.max_tokens) / 1_000;

async function launch(fake: FakeOpenAi, env: Record<string, string>): Promise<LaunchedCluster> {
  return startCluster({
    adminToken: 'topology-admin',
    replicas: { router: 1, governance: 2 },
    env,
    config: {
      providers: {
        openai: { keys: [{ value: 'sk-upstream' }], network_config: { base_url: fake.url, max_retries: 0 } },
      },
      governance: { pricing: { 'gpt-4o-mini': { input: 1000, output: 1000 } } },
    },
  });
}

async function createKey(cluster: LaunchedCluster, body: Record<string, unknown>) {
  const created = await post(
    `${cluster.adminUrl}/api/governance/virtual-keys`,
    { provider_configs: [{ provider: 'openai' }], ...body },
    { headers: ADMIN },
  );
  expect(created.status).toBe(201);
  return created.body as { id: string; value: string };
}

const used = (cluster: LaunchedCluster, id: string) => charged(cluster.adminUrl, id, ADMIN);

const chat = (cluster: LaunchedCluster, key: string) =>
  post(`${cluster.url}/v1/chat/completions`, CHAT, { headers: { 'x-gw-vk': key } });

describe('gw on a 3-master Redis Cluster', () => {
  let fake: FakeOpenAi;
  let redis: RedisTopology;
  let cluster: LaunchedCluster;

  beforeAll(async () => {
    [fake, redis] = await Promise.all([startFakeOpenAi(), startRedisCluster(3)]);
    cluster = await launch(fake, { REDIS_URL: redis.url });
  }, scaled(90_000));
  afterAll(async () => {
    await cluster?.close();
    await Promise.all([fake?.close(), redis?.stop()]);
  });

  it('admits exactly a rate limit under a burst, and charges every served request once', {
    timeout: scaled(60_000),
  }, async () => {
    const limited = await createKey(cluster, {
      name: 'burst',
      rate_limit: { request_max_limit: 30, request_reset_duration: '1h' },
      budgets: [{ max_limit: 1_000, reset_duration: '1d' }],
    });
    const answers = await Promise.all(Array.from({ length: 60 }, () => chat(cluster, limited.value)));
    const statuses = answers.map((answer) => answer.status);
    // What else came back, named in the failure (a CI run once saw 19 served, the rest not recorded).
    const others = answers.filter((answer) => answer.status !== 200 && answer.status !== 429);
    expect(
      statuses.filter((status) => status === 200),
      JSON.stringify(others.map((answer) => [answer.status, answer.body])),
    ).toHaveLength(30);
    expect(statuses.filter((status) => status === 429)).toHaveLength(30);
    await waitFor(async () => Math.abs((await used(cluster, limited.id)) - 30 * COST) < 1e-9, {
      timeoutMs: 10_000,
      what: 'the charges of 30 served requests',
    });
  });
});

describe('gw through Sentinel, failing over under a steady load', () => {
  let fake: FakeOpenAi;
  let redis: Awaited<ReturnType<typeof startRedisSentinel>>;
  let cluster: LaunchedCluster;

  beforeAll(async () => {
    [fake, redis] = await Promise.all([startFakeOpenAi(), startRedisSentinel()]);
    cluster = await launch(fake, { REDIS_URL: redis.url });
  }, scaled(90_000));
  afterAll(async () => {
    await cluster?.close();
    await Promise.all([fake?.close(), redis?.stop()]);
  });

  it('serves again within seconds of a failover, and charges what was served', {
    timeout: scaled(120_000),
  }, async () => {
    const key = await createKey(cluster, {
      name: 'failover',
      budgets: [{ max_limit: 1_000, reset_duration: '1d' }],
    });
    const outcomes: Outcome[] = [];
    let failedOverAt = 0;
    let promotedAt = 0;
    const script = (async () => {
      // The load served for a while before the fault.
      await waitFor(() => outcomes.filter((outcome) => outcome.status === 200).length >= 40, {
        what: 'the load served before the failover',
      });
      const sentinel = new Redis({ host: '127.0.0.1', port: redis.sentinelPorts[0]! });
      failedOverAt = Date.now();
      await sentinel.call('SENTINEL', 'FAILOVER', SENTINEL_MASTER);
      await waitFor(
        async () =>
          ((await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', SENTINEL_MASTER)) as string[])[1] ===
          String(redis.ports[1]),
        { timeoutMs: 15_000, what: 'the replica promoted' },
      );
      promotedAt = Date.now();
      sentinel.disconnect();
      await waitFor(
        () => {
          const last = outcomes.slice(-40);
          return (
            last.length === 40 && last.every((o) => o.status === 200 && o.startedAt > promotedAt + 2_000)
          );
        },
        { timeoutMs: 30_000, intervalMs: 100, what: '40 requests in a row served after the failover' },
      );
    })();
    await steadyLoad(() => chat(cluster, key.value), script, outcomes);
    await script;

    const failed = outcomes.filter((outcome) => outcome.status !== 200);
    const served = outcomes.length - failed.length;
    for (const outcome of failed) expect(outcome.status).toBe(503);
    const lastFailure = Math.max(failedOverAt, ...failed.map((outcome) => outcome.startedAt + outcome.ms));
    // A few refusals (503, never a hang) while the connections move to the promoted replica, then served.
    expect(lastFailure - failedOverAt).toBeLessThan(scaled(5_000));
    expect(Math.max(...outcomes.map((outcome) => outcome.ms))).toBeLessThan(scaled(5_000));
    expect(outcomes.filter((outcome) => outcome.startedAt > lastFailure).length).toBeGreaterThanOrEqual(36);

    // Charged what was served, except what the old master took after its replica was promoted and before the
    // Sentinels made it a replica in turn: replication is asynchronous, so those writes go with it (README,
    // "Redis topologies"). An admission lost that way leaves its request uncharged; a settle lost that way
    // leaves its reservation charged (the sweeper charges it at its estimate later). At most the requests of
    // the failover and the two seconds after are touched, each one way or the other.
    const window = outcomes.filter(
      (outcome) => outcome.startedAt + outcome.ms >= failedOverAt && outcome.startedAt <= promotedAt + 2_000,
    ).length;
    // The settles of the last answers land after them: the charge is read once it is at least what it must be
    // and held still for a second (what a settle lost the wrong way would add has had its chance to show).
    let previous = -1;
    await waitFor(
      async () => {
        const now = await used(cluster, key.id);
        const still = now === previous;
        previous = now;
        return still && now >= (served - window) * COST - 1e-9;
      },
      { timeoutMs: 10_000, intervalMs: 1_000, what: 'the charges to settle' },
    ).catch(() => {}); // the assertions below say what was charged
    const charged = await used(cluster, key.id);
    console.info(
      `Sentinel failover under 4 clients: ${outcomes.length} requests, ${failed.length} failed (503) within ` +
        `${((lastFailure - failedOverAt) / 1000).toFixed(2)} s, slowest ${Math.max(...outcomes.map((o) => o.ms))} ms; ` +
        `charged ${charged.toFixed(3)} for ${served} served at ${COST} (reserve ${RESERVE}; ${window} requests in the failover window)`,
    );
    expect(charged).toBeGreaterThanOrEqual((served - window) * COST - 1e-9);
    // A lost settle leaves the reservation charged instead of the cost: more only where the reserve is dearer
    // (here it is cheaper, so nothing is charged above what was served).
    expect(charged).toBeLessThanOrEqual(served * COST + window * Math.max(0, RESERVE - COST) + 1e-9);
  });
});
