// Readiness, liveness, the drain delay and start-up retries of the cluster's processes (issue 42; readiness is
// the cluster's: the embedded gateway has nothing to wait for, test/modes/operations-cases.ts). Beside a running
// cluster, an ingress or a router is started on its own, its Redis or its router behind a proxy that refuses
// connections until the case opens it:
// - an ingress whose Redis comes up late keeps trying (it used to exit), then becomes ready and serves;
// - an ingress up before its router answers /health/live and /health but is not ready until the router is;
// - a SIGTERMed ingress reports draining and keeps serving new connections for GW_DRAIN_DELAY_MS, then drains;
// - a router's gRPC health (what clients and the kubelet read) is NOT_SERVING while its store does not answer.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { RouterClient } from '@gw/router/client';
import {
  type FakeOpenAi,
  freePort,
  type LaunchedCluster,
  scaled,
  startCluster,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type LateProxy, startLateProxy } from './support/late-proxy.ts';

const TOKEN = randomBytes(32).toString('hex');
const REDIS = new URL(process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379');
const hello = [{ role: 'user', content: 'Say hello' }];

interface Started {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** A JSON answer of a GET, or undefined while nothing answers. */
async function probe(url: string): Promise<{ status: number; body: unknown } | undefined> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(scaled(2_000)) });
    return { status: response.status, body: await response.json() };
  } catch {
    return undefined;
  }
}

/** A chat on a connection of its own (no pooled keep-alive one): what a client new to the replica sends. */
function chatOnNewConnection(
  url: string,
): Promise<{ status: number | undefined; headers: IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${url}/v1/chat/completions`,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json' }, timeout: 10_000 },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (text: string) => {
          body += text;
        });
        response.on('end', () => resolve({ status: response.statusCode, headers: response.headers, body }));
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify({ model: 'openai/gpt-4o-mini', messages: hello }));
  });
}

/** True when a fresh TCP connection to the port is refused (nothing listens any more). */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

describe('readiness, liveness, drain delay and start-up retries (cluster)', () => {
  let fake: FakeOpenAi;
  let cluster: LaunchedCluster;
  let directory: string;
  let configPath: string;
  const processes: Started[] = [];
  const proxies: LateProxy[] = [];

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    const config = {
      providers: {
        openai: { keys: [{ value: 'sk-upstream' }], network_config: { base_url: fake.url, max_retries: 0 } },
      },
    };
    directory = await mkdtemp(join(tmpdir(), 'gw-readiness-'));
    configPath = join(directory, 'gateway.json');
    await writeFile(configPath, JSON.stringify(config));
    cluster = await startCluster({ config, env: { GW_CLUSTER_TOKEN: TOKEN }, readyTimeoutMs: 120_000 });
  }, scaled(150_000));

  afterEach(async () => {
    for (const started of processes.splice(0)) {
      if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGKILL');
      await started.exited;
    }
    for (const proxy of proxies.splice(0)) await proxy.close();
    fake.requests.length = 0;
  });

  afterAll(async () => {
    await cluster?.close();
    await fake?.close();
    if (directory) await rm(directory, { recursive: true, force: true });
  });

  const lateProxy = async (target: { host: string; port: number }) => {
    const proxy = await startLateProxy(target);
    proxies.push(proxy);
    return proxy;
  };
  const redisTarget = () => ({ host: REDIS.hostname, port: Number(REDIS.port || 6379) });

  /** A service of the cluster started on its own, sharing the cluster's Redis prefix, token and config. */
  function startService(service: 'ingress' | 'router', env: Record<string, string>): Started {
    const entry = fileURLToPath(new URL(`../services/${service}/src/main.ts`, import.meta.url));
    const child = spawn(process.execPath, [entry], {
      env: {
        ...process.env,
        GW_HOST: '127.0.0.1',
        REDIS_URL: REDIS.href,
        GW_REDIS_PREFIX: cluster.prefix,
        GW_CLUSTER_TOKEN: TOKEN,
        GATEWAY_CONFIG: configPath,
        GW_ROUTER_ADDR: `127.0.0.1:${cluster.ports.router[0]}`,
        GW_GOVERNANCE_ADDR: `127.0.0.1:${cluster.ports.governance[0]}`,
        GW_LOGS_STREAM: 'off',
        LOG_LEVEL: 'warn',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const collect = (chunk: Buffer) => {
      output += chunk.toString('utf8');
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const started = { child, output: () => output, exited };
    processes.push(started);
    return started;
  }

  it('an ingress whose Redis comes up late keeps trying, then becomes ready and serves', {
    timeout: scaled(90_000),
  }, async () => {
    const redis = await lateProxy(redisTarget());
    const port = await freePort();
    const ingress = startService('ingress', {
      PORT: String(port),
      REDIS_URL: `redis://127.0.0.1:${redis.port}`,
    });
    // One start makes five connection attempts and used to exit after them: more means it started again.
    await waitFor(() => redis.refused() >= 8, { timeoutMs: 30_000, what: 'a second start-up attempt' });
    expect(ingress.child.exitCode).toBeNull();
    expect(ingress.output()).toContain('start-up: a store or peer is not answering yet; trying again');
    redis.open();
    const ready = await waitFor(
      async () => {
        const answer = await probe(`http://127.0.0.1:${port}/health/ready`);
        return answer?.status === 200 && answer;
      },
      { timeoutMs: 30_000, what: 'the ingress to be ready' },
    );
    expect(ready.body).toEqual({ status: 'ready', checks: { router: 'ok', store: 'ok' } });
    const chat = await chatOnNewConnection(`http://127.0.0.1:${port}`);
    expect(chat.status).toBe(200);
    expect(fake.requests).toHaveLength(1);
  });

  it('an ingress up before its router is live but not ready until a router replica answers', {
    timeout: scaled(90_000),
  }, async () => {
    const router = await lateProxy({ host: '127.0.0.1', port: cluster.ports.router[0]! });
    const port = await freePort();
    startService('ingress', { PORT: String(port), GW_ROUTER_ADDR: `127.0.0.1:${router.port}` });
    const base = `http://127.0.0.1:${port}`;
    const live = await waitFor(() => probe(`${base}/health/live`), {
      timeoutMs: 30_000,
      what: 'the ingress to listen',
    });
    expect(live.status).toBe(200);
    expect(live.body).toMatchObject({ status: 'live' });
    expect(await probe(`${base}/health/ready`)).toEqual({
      status: 503,
      body: { status: 'not_ready', checks: { router: 'no router replica connected', store: 'ok' } },
    });
    // `/health` answers as it always has: up, and not draining.
    expect(await probe(`${base}/health`)).toEqual({ status: 200, body: { status: 'ok' } });
    router.open();
    await waitFor(async () => (await probe(`${base}/health/ready`))?.status === 200, {
      timeoutMs: 20_000,
      what: 'the ingress to be ready',
    });
    expect((await chatOnNewConnection(base)).status).toBe(200);
  });

  it('a SIGTERMed ingress reports draining and serves new connections for GW_DRAIN_DELAY_MS, then drains', {
    timeout: scaled(90_000),
  }, async () => {
    const delayMs = 8_000;
    const port = await freePort();
    const ingress = startService('ingress', {
      PORT: String(port),
      GW_DRAIN_DELAY_MS: String(delayMs),
      GW_SHUTDOWN_TIMEOUT_MS: '3000',
    });
    const base = `http://127.0.0.1:${port}`;
    await waitFor(async () => (await probe(`${base}/health/ready`))?.status === 200, {
      timeoutMs: 30_000,
      what: 'the ingress to be ready',
    });
    const signalled = performance.now();
    ingress.child.kill('SIGTERM');
    await waitFor(async () => (await probe(`${base}/health/ready`))?.status === 503, {
      what: 'readiness to say draining',
    });
    expect(await probe(`${base}/health/ready`)).toEqual({
      status: 503,
      body: { status: 'draining', checks: {} },
    });
    expect(await probe(`${base}/health`)).toEqual({ status: 503, body: { status: 'draining' } });
    // A client new to the replica is still served, and told to take its next request elsewhere.
    const chat = await chatOnNewConnection(base);
    expect(chat.status).toBe(200);
    expect(chat.headers.connection).toBe('close');
    expect(fake.requests).toHaveLength(1);
    expect(await probe(`${base}/health/live`)).toMatchObject({ status: 200 });
    // Then it drains: the listener closes, no sooner than the delay, and the process exits cleanly.
    await waitFor(() => refused(port), { timeoutMs: delayMs + 10_000, what: 'the listener to close' });
    expect(performance.now() - signalled).toBeGreaterThanOrEqual(delayMs);
    expect(await ingress.exited).toBe(0);
  });

  it("a router's gRPC health is NOT_SERVING while its store does not answer, and SERVING again once it does", {
    timeout: scaled(90_000),
  }, async () => {
    const redis = await lateProxy(redisTarget());
    redis.open();
    const [grpcPort, metricsPort] = [await freePort(), await freePort()];
    startService('router', {
      REDIS_URL: `redis://127.0.0.1:${redis.port}`,
      GW_ROUTER_PORT: String(grpcPort),
      GW_METRICS_PORT: String(metricsPort),
    });
    const ready = `http://127.0.0.1:${metricsPort}/health/ready`;
    // The router as its callers see it: replicas that answer their health checks SERVING.
    const client = new RouterClient({
      address: `127.0.0.1:${grpcPort}`,
      security: { token: TOKEN },
      deadlineMs: 1_000,
      callDeadlineMs: 10_000,
    });
    try {
      await waitFor(() => client.servingReplicas() === 1, { timeoutMs: 30_000, what: 'the router to serve' });
      expect(await probe(ready)).toEqual({ status: 200, body: { status: 'ready', checks: { store: 'ok' } } });
      redis.cut();
      await waitFor(() => client.servingReplicas() === 0, { timeoutMs: 15_000, what: 'NOT_SERVING' });
      expect(await probe(ready)).toEqual({
        status: 503,
        body: { status: 'not_ready', checks: { store: 'unreachable' } },
      });
      // Its process is alive all along: the kubelet must not restart it for its store.
      expect(await probe(`http://127.0.0.1:${metricsPort}/health/live`)).toMatchObject({ status: 200 });
      redis.open();
      await waitFor(() => client.servingReplicas() === 1, { timeoutMs: 15_000, what: 'SERVING again' });
    } finally {
      client.close();
    }
  });
});
