// A dead Redis in cluster mode: requests that need shared state fail at once with 503 service_unavailable
// (never hang), requests that do not keep being served, and everything recovers when Redis is back.
import { type ChildProcess, spawn } from 'node:child_process';
import {
  type FakeOpenAi,
  freePort,
  type LaunchedGateway,
  startCluster,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGatewayError, post } from './support/http.ts';

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
  }, 60_000);
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
    redis?.kill('SIGKILL');
  });

  const governed = () => post(`${gateway.url}/v1/chat/completions`, CHAT, { headers: { 'x-gw-vk': KEY } });

  it('answers 503 at once while Redis is down, serves keyless requests, and recovers', async () => {
    expect((await governed()).status).toBe(200);
    redis.kill('SIGKILL');
    await new Promise((resolve) => redis.once('exit', resolve));

    const started = performance.now();
    const refused = await governed();
    expect(performance.now() - started).toBeLessThan(2_000);
    expectGatewayError(refused, { status: 503, type: 'service_unavailable' });
    expect(refused.headers.get('retry-after')).toBe('1');
    // Without a key nothing needs Redis: ingress decides locally and the router serves from its memory.
    expect((await post(`${gateway.url}/v1/chat/completions`, CHAT)).status).toBe(200);

    redis = await startRedis(port);
    await waitFor(async () => (await governed()).status === 200, { timeoutMs: 15_000 });
  }, 60_000);
});
