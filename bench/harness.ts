// What the bench's orchestrating scripts share (`pnpm bench`: run.ts; `pnpm bench:shards`: redis-shards.ts): the
// processes they start and how every one of them is stopped (at the end, on an error, on SIGINT or SIGTERM), the
// mock upstream, a gateway's readiness, the counts they read from Redis and from gw's /metrics, their tables.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { type ErrorSample, serial } from './load.ts';

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
export const HOST = '127.0.0.1';
export const CHAT_PATH = '/v1/chat/completions';
/** The upstream key the mock checks and gw's config names. */
export const API_KEY = 'sk-bench';

export function intEnv(name: string, fallback: number, min = 0): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${name}: '${raw}' is not an integer >= ${min}`);
  return value;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// ---------------------------------------------------------------------------------------------- processes

export interface Started {
  name: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Spawned in its own process group (the cluster and its services). */
  group: boolean;
  logPath: string;
}

const running = new Set<Started>();

/** Something else the run started (a Redis Cluster): killed at exit, stopped in order on SIGINT or SIGTERM. */
interface Resource {
  kill(): void;
  stop(): Promise<void>;
}
const resources = new Set<Resource>();

/** Keeps `resource` to be stopped however the run ends; the returned function forgets it (once it was stopped). */
export function stopAtExit(resource: Resource): () => void {
  stopAllAtExit();
  resources.add(resource);
  return () => resources.delete(resource);
}

/** A node script of the checkout at `root` (this one by default), its output appended to `logPath`. */
export function start(
  name: string,
  script: string,
  env: NodeJS.ProcessEnv,
  logPath: string,
  options: { group?: boolean; stdout?: 'pipe'; nodeArgs?: string[]; args?: string[]; root?: string } = {},
): Started {
  stopAllAtExit();
  const log = openSync(logPath, 'a');
  const root = options.root ?? ROOT;
  const argv = [...(options.nodeArgs ?? []), join(root, script), ...(options.args ?? [])];
  const child = spawn(process.execPath, argv, {
    cwd: root,
    env,
    stdio: ['ignore', options.stdout ?? log, log],
    detached: options.group ?? false,
  });
  closeSync(log);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
    child.on('error', () => resolve({ code: -1, signal: null }));
  });
  const started: Started = { name, child, exited, group: options.group ?? false, logPath };
  running.add(started);
  void exited.then(() => running.delete(started));
  return started;
}

/** SIGTERM, wait for the exit; SIGKILL (the whole group for the cluster) when it does not come. */
export async function stop(started: Started, timeoutMs = 40_000) {
  const begun = performance.now();
  if (started.child.exitCode === null && started.child.signalCode === null) started.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  let result = await Promise.race([started.exited, timedOut]);
  clearTimeout(timer);
  let killed = false;
  if (result === 'timeout') {
    killed = true;
    kill(started);
    result = await started.exited;
  }
  return { ms: Math.round(performance.now() - begun), code: result.code, signal: result.signal, killed };
}

function kill(started: Started): void {
  try {
    if (started.group && started.child.pid) process.kill(-started.child.pid, 'SIGKILL');
    else started.child.kill('SIGKILL');
  } catch {}
}

let watching = false;

/**
 * From the first process or resource on: at exit everything still running is killed; on SIGINT or SIGTERM it is
 * stopped, then the bench exits (130). A script that starts nothing through here keeps its own signal handling.
 */
function stopAllAtExit(): void {
  if (watching) return;
  watching = true;
  process.on('exit', () => {
    for (const started of running) kill(started);
    for (const resource of resources) resource.kill();
  });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      console.error(`\n${signal}: stopping the bench processes`);
      for (const started of running) started.child.kill('SIGTERM');
      setTimeout(() => process.exit(130), 5_000).unref();
      void Promise.all([
        ...[...running].map((started) => started.exited),
        ...[...resources].map((resource) => resource.stop()),
      ]).then(() => process.exit(130));
    });
  }
}

export async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ReturnType<typeof createServer>>((resolve, reject) => {
          const server = createServer();
          server.once('error', reject);
          server.listen(0, HOST, () => resolve(server));
        }),
    ),
  );
  const ports = servers.map((server) => (server.address() as { port: number }).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}

export function logTail(path: string, lines = 30): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** The parent environment without variables that would point gw at something else than this run's. */
export function baseEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name.startsWith('GW_') || name.startsWith('GATEWAY_') || name === 'REDIS_URL' || name === 'PORT') {
      delete env[name];
    }
  }
  return { ...env, GW_HOST: HOST, LOG_LEVEL: 'warn' };
}

// ---------------------------------------------------------------------------------------------- the mock

/** bench/mock-upstream.ts in its own process, streams of `streamChunks` content chunks; its URL once it listens. */
export async function startMock(tmp: string, streamChunks: number) {
  const mock = start(
    'mock',
    'bench/mock-upstream.ts',
    {
      ...process.env,
      MOCK_PORT: '0',
      MOCK_STREAM_CHUNKS: String(streamChunks),
      MOCK_API_KEY: API_KEY,
    },
    join(tmp, 'mock.log'),
    { stdout: 'pipe' },
  );
  const lines = createInterface({ input: mock.child.stdout! });
  const ready = new Promise<number>((resolve, reject) => {
    lines.once('line', (line) => resolve((JSON.parse(line) as { port: number }).port));
    void mock.exited.then(({ code, signal }) =>
      reject(new Error(`mock upstream exited (${signal ?? code}): ${logTail(mock.logPath)}`)),
    );
  });
  const port = await ready;
  lines.on('line', () => {});
  return { mock, url: `http://${HOST}:${port}` };
}

async function getJson(url: string): Promise<unknown> {
  const { statusCode, body } = await request(url, { headersTimeout: 5_000, bodyTimeout: 5_000 });
  const text = await body.text();
  if (statusCode !== 200) throw new Error(`GET ${url}: ${statusCode} ${text.slice(0, 200)}`);
  return JSON.parse(text);
}

export interface MockStats {
  requests: number;
  streams: number;
  rejected: number;
  /** OTLP export requests the mock's collector took, and their bytes (BENCH_TRACING). */
  traceExports?: number;
  traceBytes?: number;
}

export const mockStats = async (mockUrl: string) => (await getJson(`${mockUrl}/__stats`)) as MockStats;
export const delta = (from: MockStats, to: MockStats): MockStats => ({
  requests: to.requests - from.requests,
  streams: to.streams - from.streams,
  rejected: to.rejected - from.rejected,
});

// ---------------------------------------------------------------------------------------------- readiness

/** What a target is asked: its chat body and headers, and the GET that answers 200 once it listens. */
export interface Probe {
  readyPath: string;
  body: string;
  headers: Record<string, string>;
}

/** Waits until the ready path answers 200, then until one real chat request answers 200. */
export async function waitReady(started: Started, base: string, probe: Probe, timeoutMs: number) {
  const begun = performance.now();
  const deadline = begun + timeoutMs;
  const died = () => {
    if (started.child.exitCode !== null || started.child.signalCode !== null) {
      throw new Error(
        `${started.name} exited during startup (${started.child.signalCode ?? started.child.exitCode}):\n${logTail(started.logPath)}`,
      );
    }
  };
  let lastError = '';
  for (;;) {
    died();
    try {
      const { statusCode, body } = await request(base + probe.readyPath, {
        headersTimeout: 2_000,
        bodyTimeout: 2_000,
      });
      await body.dump();
      if (statusCode === 200) break;
      lastError = `${probe.readyPath} answered ${statusCode}`;
    } catch (error) {
      lastError = (error as Error).message;
    }
    if (performance.now() > deadline) throw new Error(`${started.name}: not healthy in time (${lastError})`);
    await sleep(100);
  }
  const healthyMs = performance.now() - begun;
  let probeFailures = 0;
  let firstProbeFailure: ErrorSample | undefined;
  for (;;) {
    died();
    const answer = await serial(base + CHAT_PATH, probe.body, 1, {
      headers: probe.headers,
      phase: 'startup probe',
    });
    if (answer.errors === 0) break;
    probeFailures++;
    firstProbeFailure ??= answer.errorSamples[0];
    if (performance.now() > deadline) {
      throw new Error(
        `${started.name}: healthy but chat requests fail: ${JSON.stringify(answer.errorSamples[0])}`,
      );
    }
    await sleep(100);
  }
  return {
    healthyMs: Math.round(healthyMs),
    readyMs: Math.round(performance.now() - begun),
    probeFailures,
    ...(firstProbeFailure ? { firstProbeFailure } : {}),
  };
}

// ---------------------------------------------------------------------------------------------- counts

/**
 * Lua script calls in an `INFO commandstats` answer (`evalsha`/`eval`): each is one round trip, whatever the
 * script does inside (the commands a script runs are counted under their own names and are not round trips).
 */
export function scriptCalls(commandstats: string): number {
  return [...commandstats.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)].reduce(
    (sum, match) => sum + Number(match[1]),
    0,
  );
}

/** Calls by command in an `INFO commandstats` answer (the commands scripts run included). */
export function commandCalls(commandstats: string): Record<string, number> {
  return Object.fromEntries(
    [...commandstats.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((match) => [
      match[1]!,
      Number(match[2]),
    ]),
  );
}

/**
 * An ingress's governed admissions so far (`gw_governance_admissions_total` of its /metrics): `exact` ones made
 * against Redis on the request's path, `local` ones answered from its slices.
 */
export async function admissions(base: string): Promise<{ local: number; exact: number }> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const count = (path: string) =>
    Number(
      new RegExp(`^gw_governance_admissions_total\\{path="${path}"[^}]*\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0,
    );
  return { local: count('local'), exact: count('exact') };
}

// ---------------------------------------------------------------------------------------------- report

/** Rows of cells as columns: the first left-aligned, the others right-aligned. */
export function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
        .join('  '),
    )
    .join('\n');
}
