// A dead Redis in cluster mode: requests that need shared state fail at once with 503 service_unavailable
// (never hang), requests that do not keep being served, and everything recovers when Redis is back.
import { type ChildProcess, spawn } from 'node:child_process';
import {
  type FakeOpenAi,
  freePort,
  type LaunchedGateway,
  scaled,
  startCluster,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGatewayError, get, post } from './support/http.ts';
import { charged, steadyLoad } from './support/steady-load.ts';

const KEY = 'sk-gw-fault00000000000000000000000000000000000';
const CHAT = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout!.on('data', (bytes: Buffer) => {
      if (bytes.toString().includes('Ready to accept connections')) resolve(child);
    });
  });
}

describe('cluster mode with a Redis that dies and comes back', () => {
  let fake: FakeOpenAi;
  let gateway: LaunchedGateway;
  let redis: ChildProcess;
  let port: number;

  beforeAll(async () => {
    port = await freePort();
    redis = await startRedis(port);
    fake = await startFakeOpenAi();
    gateway = await startCluster({
      env: { REDIS_URL: `redis://127.0.0.1:${port}` },
      config: {
        providers: {
          openai: {
            keys: [{ value: 'sk-upstream' }],
            network_config: { base_url: fake.url, max_retries: 0 },
          },
        },
        governance: {
          virtual_keys: [
            {
              name: 'fault',
              value: KEY,
              provider_configs: [{ provider: 'openai' }],
              rate_limit: { request_max_limit: 1000 },
            },
          ],
        },
      },
    });
  }, scaled(60_000));
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
    redis?.kill('SIGKILL');
  });

  const governed = () => post(`${gateway.url}/v1/chat/completions`, CHAT, { headers: { 'x-gw-vk': KEY } });

  it('answers 503 at once while Redis is down, serves keyless requests, and recovers', {
    timeout: scaled(90_000),
  }, async () => {
    expect((await governed()).status).toBe(200);
    redis.kill('SIGKILL');
    await new Promise((resolve) => redis.once('exit', resolve));

    // An ingress that has not yet seen its Redis connection close (its socket's close event and the request may
    // come in one turn of its event loop) admits from the slices it holds (docs/governance.md "Allowances"); once
    // it has, each governed request is refused at once.
    let slowestMs = 0;
    const refused = await waitFor(
      async () => {
        const started = performance.now();
        const answer = await governed();
        slowestMs = Math.max(slowestMs, performance.now() - started);
        return answer.status !== 200 && answer;
      },
      { timeoutMs: 5_000, what: 'a governed request refused while Redis is down' },
    );
    expect(slowestMs).toBeLessThan(scaled(2_000));
    expectGatewayError(refused, { status: 503, type: 'service_unavailable' });
    expect(refused.headers.get('retry-after')).toBe('1');
    // Without a key nothing needs Redis: ingress decides locally and the router serves from its memory.
    expect((await post(`${gateway.url}/v1/chat/completions`, CHAT)).status).toBe(200);

    redis = await startRedis(port);
    // Alone this takes under a second; under a loaded full run it once took longer than 15 s (the note of stop 31
    // names it to be understood): the bound is what the test allows, not what recovery should take.
    await waitFor(async () => (await governed()).status === 200, { timeoutMs: 45_000 });
  });
});

describe('cluster mode with a Redis that stalls (SIGSTOP) under a steady load', () => {
  let fake: FakeOpenAi;
  let gateway: LaunchedGateway;
  let redis: ChildProcess;
  /** How long Redis stays frozen (`FAULT_STALL_MS` overrides, for the figures of the note). */
  const stallMs = Number(process.env['FAULT_STALL_MS'] ?? 4_000);

  beforeAll(async () => {
    const port = await freePort();
    redis = await startRedis(port);
    fake = await startFakeOpenAi();
    gateway = await startCluster({
      env: { REDIS_URL: `redis://127.0.0.1:${port}` },
      adminToken: 'stall-admin',
      config: {
        providers: {
          openai: {
            keys: [{ value: 'sk-upstream' }],
            network_config: { base_url: fake.url, max_retries: 0 },
          },
        },
        governance: {
          pricing: { 'gpt-4o-mini': { input: 1000, output: 1000 } },
          virtual_keys: [
            {
              name: 'stall',
              value: KEY,
              provider_configs: [{ provider: 'openai' }],
              budgets: [{ max_limit: 1_000, reset_duration: '1d' }],
            },
          ],
        },
      },
    });
  }, scaled(60_000));
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
    redis?.kill('SIGKILL');
  });

  const governed = () => post(`${gateway.url}/v1/chat/completions`, CHAT, { headers: { 'x-gw-vk': KEY } });

  it('fails governed requests within about a command timeout while Redis is frozen, then recovers; charges match', {
    timeout: scaled(90_000),
  }, async () => {
    let frozenAt = 0;
    let thawedAt = 0;
    // Drill time: how long the load runs or a fault is held, not a wait for something to happen.
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const script = (async () => {
      await pause(1_000);
      frozenAt = Date.now();
      redis.kill('SIGSTOP');
      await pause(stallMs);
      redis.kill('SIGCONT');
      thawedAt = Date.now();
      await pause(3_000);
    })();
    const outcomes = await steadyLoad(governed, script);

    // Requests that started and would have ended while Redis was frozen (one that starts in its last second
    // may be answered by a Redis that is back within its command timeout).
    const during = outcomes.filter((o) => o.startedAt > frozenAt + 1_500 && o.startedAt < thawedAt - 1_500);
    const after = outcomes.filter((o) => o.startedAt > thawedAt + 1_500);
    const slowest = Math.max(...outcomes.map((o) => o.ms));
    // No request waits for the frozen Redis: it fails (503) after about a command timeout.
    expect(slowest).toBeLessThan(scaled(5_000));
    expect(during.length).toBeGreaterThan(0);
    expect(during.every((o) => o.status === 503)).toBe(true);
    expect(after.length).toBeGreaterThan(0);
    expect(after.every((o) => o.status === 200)).toBe(true);
    const served = outcomes.filter((o) => o.status === 200).length;
    // From the thaw to the first request that started after it and was served.
    const recovered =
      Math.min(
        ...outcomes.filter((o) => o.startedAt >= thawedAt && o.status === 200).map((o) => o.startedAt + o.ms),
      ) - thawedAt;
    // Every served request is charged once Redis is back (settles retry until it is).
    const used = async () =>
      (await get(`${gateway.adminUrl}/api/governance/virtual-keys`, { authorization: 'Bearer stall-admin' }))
        .body;
    const keys = await used();
    const id = (keys as Array<{ id: string; name: string }>).find((key) => key.name === 'stall')!.id;
    let lastUsed = 0;
    await waitFor(
      async () => {
        lastUsed = await charged(gateway.adminUrl, id, { authorization: 'Bearer stall-admin' });
        return Math.abs(lastUsed - served * 0.018) < 1e-9;
      },
      { timeoutMs: 20_000, what: `the charges of ${served} served requests` },
    ).catch((error) => {
      throw new Error(`${(error as Error).message}: charged ${lastUsed}, served ${served * 0.018}`);
    });
    console.info(
      `Redis frozen ${stallMs} ms: ${outcomes.length} requests, ${outcomes.filter((o) => o.status === 503).length} ` +
        `answered 503, slowest ${slowest} ms, recovered within ${recovered} ms of the thaw; charged = served (${served})`,
    );
  });
});
