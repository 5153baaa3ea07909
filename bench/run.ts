// `pnpm bench`: one benchmark run. Starts the mock upstream, measures it directly, then gw embedded and gw
// cluster in front of it (each in its own processes), and prints and saves the overhead and throughput.
// See bench/README.md for the figures and the BENCH_* knobs.
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, freemem, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { request } from 'undici';
import {
  type ConcurrentResult,
  concurrent,
  type ErrorSample,
  firstChunk,
  type LatencyStats,
  type SerialResult,
  serial,
  summarize,
} from './load.ts';
import { PROMPT_4K } from './prompt-4k.ts';

// ---------------------------------------------------------------------------------------------- parameters

function intEnv(name: string, fallback: number, min = 0): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min)
    throw new Error(`${name}: '${raw}' is not an integer >= ${min}`);
  return value;
}

/**
 * BENCH_TRACING: sampling ratios (0..1) or `off`, comma-separated. Each gw mode is measured once per entry, in
 * that order, in the same run (against the same direct figures); a ratio turns tracing on in gw's config,
 * exporting to the mock's collector. Unset: `off` alone.
 */
function tracingEnv(name: string): Array<number | undefined> {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return [undefined];
  return raw.split(',').map((entry) => {
    if (entry.trim() === 'off') return undefined;
    const value = Number(entry);
    if (entry.trim() === '' || !(value >= 0 && value <= 1))
      throw new Error(`${name}: '${entry}' is neither off nor a ratio between 0 and 1`);
    return value;
  });
}

/**
 * BENCH_LOGS: `on` (request logs with metadata only, the default config) or `off` (`logs.enabled: false`),
 * comma-separated; each gw mode is measured once per entry and tracing ratio. Unset: the config's default alone.
 */
function logsEnv(name: string): Array<boolean | undefined> {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return [undefined];
  return raw.split(',').map((entry) => {
    const value = entry.trim();
    if (value !== 'on' && value !== 'off') throw new Error(`${name}: '${entry}' is neither on nor off`);
    return value === 'on';
  });
}

const MODES = ['embedded', 'cluster'] as const;
type Mode = (typeof MODES)[number];

function modesEnv(): Mode[] {
  const raw = process.env['BENCH_MODES'] ?? 'embedded,cluster';
  const modes = raw
    .split(',')
    .map((mode) => mode.trim())
    .filter(Boolean);
  for (const mode of modes) {
    if (!(MODES as readonly string[]).includes(mode)) {
      throw new Error(`BENCH_MODES: '${mode}' is not one of ${MODES.join(', ')}`);
    }
  }
  return modes as Mode[];
}

/** `BENCH_GUARDRAILS=pii`: also measure a 4 KB prompt without, then with, a built-in PII guardrail on input. */
function guardrailsEnv(): 'pii' | undefined {
  const raw = process.env['BENCH_GUARDRAILS'];
  if (raw === undefined || raw === '') return undefined;
  if (raw !== 'pii') throw new Error(`BENCH_GUARDRAILS: '${raw}' is not one of pii`);
  return raw;
}

const params = {
  serial: intEnv('BENCH_SERIAL', 2000, 1),
  serialWarmup: intEnv('BENCH_WARMUP', 300),
  concurrency: intEnv('BENCH_CONCURRENCY', 50, 1),
  durationMs: intEnv('BENCH_DURATION_MS', 10_000, 1),
  warmupMs: intEnv('BENCH_WARMUP_MS', 2_000),
  streams: intEnv('BENCH_STREAMS', 500, 1),
  streamWarmup: intEnv('BENCH_STREAM_WARMUP', 50),
  /** Also measure every mode with a virtual key (governance counters on every request). */
  governed: process.env['BENCH_GOVERNED'] !== '0',
  streamChunks: intEnv('BENCH_STREAM_CHUNKS', 5, 1),
  modes: modesEnv(),
  guardrails: guardrailsEnv(),
  redisUrl: process.env['REDIS_URL'] || 'redis://127.0.0.1:6379',
  startTimeoutMs: intEnv('BENCH_START_TIMEOUT_MS', 60_000, 1),
  tracing: tracingEnv('BENCH_TRACING'),
  logs: logsEnv('BENCH_LOGS'),
};

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RESULTS = join(ROOT, 'bench', 'results');
const HOST = '127.0.0.1';
const PATH = '/v1/chat/completions';
const API_KEY = 'sk-bench';
const VIRTUAL_KEY = 'sk-gw-bench00000000000000000000000000000000000';

const message = [{ role: 'user', content: 'hello' }];
const bodies = {
  gw: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: message, max_tokens: 16 }),
  gwStream: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: message, max_tokens: 16, stream: true }),
  direct: JSON.stringify({ model: 'gpt-4o-mini', messages: message, max_tokens: 16 }),
  directStream: JSON.stringify({ model: 'gpt-4o-mini', messages: message, max_tokens: 16, stream: true }),
};
const prompt4k = [{ role: 'user', content: PROMPT_4K }];
const bodies4k = {
  gw: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: prompt4k, max_tokens: 16 }),
  gwStream: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: prompt4k, max_tokens: 16, stream: true }),
};
/** The guardrail rule of the `+pii` rows: chosen by header, so the `+4k` rows run with the same config. */
const GUARDRAIL_RULE = 'bench-pii';

// ---------------------------------------------------------------------------------------------- processes

interface Started {
  name: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Spawned in its own process group (the cluster and its services). */
  group: boolean;
  logPath: string;
}

const running = new Set<Started>();

function start(
  name: string,
  script: string,
  env: NodeJS.ProcessEnv,
  logPath: string,
  options: { group?: boolean; stdout?: 'pipe' } = {},
): Started {
  const log = openSync(logPath, 'a');
  const child = spawn(process.execPath, [join(ROOT, script)], {
    cwd: ROOT,
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
async function stop(started: Started, timeoutMs = 40_000) {
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

function killAll(): void {
  for (const started of running) kill(started);
}
process.on('exit', killAll);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    console.error(`\n${signal}: stopping the bench processes`);
    for (const started of running) started.child.kill('SIGTERM');
    setTimeout(() => process.exit(130), 5_000).unref();
    void Promise.all([...running].map((started) => started.exited)).then(() => process.exit(130));
  });
}

async function freePorts(count: number): Promise<number[]> {
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function logTail(path: string, lines = 30): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

async function startMock(tmp: string) {
  const mock = start(
    'mock',
    'bench/mock-upstream.ts',
    {
      ...process.env,
      MOCK_PORT: '0',
      MOCK_STREAM_CHUNKS: String(params.streamChunks),
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

interface MockStats {
  requests: number;
  streams: number;
  rejected: number;
  /** OTLP export requests the mock's collector took, and their bytes (BENCH_TRACING). */
  traceExports?: number;
  traceBytes?: number;
}

const mockStats = async (mockUrl: string) => (await getJson(`${mockUrl}/__stats`)) as MockStats;
const delta = (from: MockStats, to: MockStats): MockStats => ({
  requests: to.requests - from.requests,
  streams: to.streams - from.streams,
  rejected: to.rejected - from.rejected,
});

/** Waits until GET /health answers 200, then until one real chat request answers 200. */
async function waitReady(started: Started, base: string) {
  const begun = performance.now();
  const deadline = begun + params.startTimeoutMs;
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
      const { statusCode, body } = await request(`${base}/health`, {
        headersTimeout: 2_000,
        bodyTimeout: 2_000,
      });
      await body.dump();
      if (statusCode === 200) break;
      lastError = `/health answered ${statusCode}`;
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
    const probe = await serial(base + PATH, bodies.gw, 1, { phase: 'startup probe' });
    if (probe.errors === 0) break;
    probeFailures++;
    firstProbeFailure ??= probe.errorSamples[0];
    if (performance.now() > deadline) {
      throw new Error(
        `${started.name}: healthy but chat requests fail: ${JSON.stringify(probe.errorSamples[0])}`,
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

// ---------------------------------------------------------------------------------------------- measurement

interface PhaseResult {
  requests: number;
  errors: number;
  latency: LatencyStats;
  errorSamples: ErrorSample[];
}

interface TargetResult {
  target: string;
  url: string;
  ok: boolean;
  failure?: string;
  startup?: Awaited<ReturnType<typeof waitReady>>;
  shutdown?: Awaited<ReturnType<typeof stop>>;
  warmupErrors?: number;
  serial?: PhaseResult;
  throughput?: PhaseResult & { ok: number; rps: number; elapsedMs: number; concurrency: number };
  firstChunk?: PhaseResult;
  /** Calls the mock received during each measured phase (retries or lost calls would show here). */
  upstream?: { serial: MockStats; throughput: MockStats; firstChunk: MockStats };
  /**
   * Embedded rows: the gateway process's CPU time (user + system) per upstream call over all phases, in µs. A
   * loaded machine slows every wall-clock figure; this one moves much less, so it compares builds and
   * settings (tracing on or off) where latency and throughput are noise.
   */
  cpuUsPerRequest?: number;
  /** Governed cluster rows: Redis script round trips per request (INFO commandstats evalsha). */
  redisCallsPerRequest?: number;
  errors: number;
  errorSamples: ErrorSample[];
  logPath?: string;
  logLines?: number;
  logHead?: string[];
}

function phase(result: SerialResult): PhaseResult {
  return {
    requests: result.requests,
    errors: result.errors,
    latency: summarize(result.latencies),
    errorSamples: result.errorSamples,
  };
}

function throughputPhase(result: ConcurrentResult, concurrency: number) {
  return {
    requests: result.requests,
    ok: result.ok,
    errors: result.errors,
    rps: result.rps,
    elapsedMs: Math.round(result.elapsedMs),
    concurrency,
    latency: summarize(result.latencies),
    errorSamples: result.errorSamples,
  };
}

function progress(text: string): void {
  process.stderr.write(`[bench] ${text}\n`);
}

async function measure(
  target: string,
  base: string,
  mockUrl: string,
  body: string,
  streamBody: string,
  headers: Record<string, string>,
): Promise<Omit<TargetResult, 'target' | 'url' | 'ok'>> {
  const url = base + PATH;
  const buffer = Buffer.from(body);
  const streamBuffer = Buffer.from(streamBody);
  const samples: ErrorSample[] = [];
  let warmupErrors = 0;

  progress(`${target}: serial warm-up ${params.serialWarmup}, then ${params.serial} serial requests`);
  const warm = await serial(url, buffer, params.serialWarmup, { headers, phase: 'serial warm-up' });
  warmupErrors += warm.errors;
  samples.push(...warm.errorSamples);
  const before = await mockStats(mockUrl);
  const serialResult = await serial(url, buffer, params.serial, { headers, phase: 'serial' });
  samples.push(...serialResult.errorSamples);
  const afterSerial = await mockStats(mockUrl);

  progress(`${target}: c=${params.concurrency} warm-up ${params.warmupMs} ms, then ${params.durationMs} ms`);
  if (params.warmupMs > 0) {
    const warmLoad = await concurrent(
      url,
      buffer,
      { concurrency: params.concurrency, durationMs: params.warmupMs },
      { headers, phase: 'throughput warm-up' },
    );
    warmupErrors += warmLoad.errors;
    samples.push(...warmLoad.errorSamples);
  }
  const beforeLoad = await mockStats(mockUrl);
  const load = await concurrent(
    url,
    buffer,
    { concurrency: params.concurrency, durationMs: params.durationMs },
    { headers, phase: 'throughput' },
  );
  samples.push(...load.errorSamples);
  const afterLoad = await mockStats(mockUrl);

  progress(`${target}: stream warm-up ${params.streamWarmup}, then ${params.streams} serial streams`);
  const warmStreams = await firstChunk(url, streamBuffer, params.streamWarmup, {
    headers,
    phase: 'stream warm-up',
  });
  warmupErrors += warmStreams.errors;
  samples.push(...warmStreams.errorSamples);
  const beforeStreams = await mockStats(mockUrl);
  const streams = await firstChunk(url, streamBuffer, params.streams, { headers, phase: 'first chunk' });
  samples.push(...streams.errorSamples);
  const afterStreams = await mockStats(mockUrl);

  const serialPhase = phase(serialResult);
  const throughput = throughputPhase(load, params.concurrency);
  const streamPhase = phase(streams);
  return {
    warmupErrors,
    serial: serialPhase,
    throughput,
    firstChunk: streamPhase,
    upstream: {
      serial: delta(before, afterSerial),
      throughput: delta(beforeLoad, afterLoad),
      firstChunk: delta(beforeStreams, afterStreams),
    },
    errors: warmupErrors + serialPhase.errors + throughput.errors + streamPhase.errors,
    errorSamples: samples.slice(0, 10),
  };
}

// ---------------------------------------------------------------------------------------------- gw modes

/** What one gw measurement turns on besides its mode. */
interface Variant {
  tracing: number | undefined;
  logs: boolean | undefined;
}

function gwConfig(tmp: string, mockUrl: string, variant: Variant): string {
  const { tracing, logs } = variant;
  const path = join(tmp, 'gateway.yaml');
  writeFileSync(
    path,
    [
      'providers:',
      '  openai:',
      '    keys:',
      `      - value: '${API_KEY}'`,
      '    network_config:',
      `      base_url: '${mockUrl}'`,
      // The governed rows send this virtual key: its budget and limits are counted on every request.
      'governance:',
      '  virtual_keys:',
      '    - name: bench',
      `      value: '${VIRTUAL_KEY}'`,
      '      provider_configs: [{ provider: openai, allowed_models: ["*"] }]',
      '      budget: { max_limit: 1000000, reset_duration: 1d }',
      '      rate_limit: { request_max_limit: 1000000000, request_reset_duration: 1m, token_max_limit: 1000000000, token_reset_duration: 1m }',
      // BENCH_TRACING: every span of every process goes to the mock's collector, in batches, over HTTP.
      ...(tracing === undefined
        ? []
        : [
            'tracing:',
            '  enabled: true',
            `  sampling_ratio: ${tracing}`,
            `  endpoint: '${mockUrl}/v1/traces'`,
          ]),
      // BENCH_LOGS: request logs on (metadata only) or off; unset, the config's default (on).
      ...(logs === undefined ? [] : ['logs:', `  enabled: ${logs}`]),
      ...(params.guardrails
        ? [
            // A built-in PII profile on input, redacting; its rule applies only to requests that name it.
            'guardrails:',
            '  profiles:',
            '    - { id: bench-pii, type: builtin, pii: [email, phone, card, iban, secret] }',
            '  rules:',
            `    - { id: ${GUARDRAIL_RULE}, condition: 'false', action: REDACT, input_profiles: [bench-pii] }`,
          ]
        : []),
      '',
    ].join('\n'),
  );
  return path;
}

/** The parent environment without variables that would point gw at something else than this run's. */
function baseEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name.startsWith('GW_') || name.startsWith('GATEWAY_') || name === 'REDIS_URL' || name === 'PORT') {
      delete env[name];
    }
  }
  return { ...env, GW_HOST: HOST, LOG_LEVEL: 'warn' };
}

function readLog(result: TargetResult): void {
  if (!result.logPath) return;
  let text = '';
  try {
    text = readFileSync(result.logPath, 'utf8').trimEnd();
  } catch {}
  const lines = text ? text.split('\n') : [];
  result.logLines = lines.length;
  result.logHead = lines.slice(0, 20).map((line) => line.slice(0, 600));
}

async function runMode(
  mode: Mode,
  tmp: string,
  mockUrl: string,
  redisPrefix: string,
  /** The sampling ratio (undefined: tracing off) and request logs (undefined: the default) of this measurement. */
  variant: Variant,
): Promise<TargetResult[]> {
  const configPath = gwConfig(tmp, mockUrl, variant);
  const { tracing, logs } = variant;
  const name = `${mode}${logs === undefined ? '' : logs ? '+logs' : '+nologs'}${tracing === undefined ? '' : `+trace${tracing}`}`;
  const dataDir = mkdtempSync(join(tmp, `${mode}-data-`));
  const logPath = join(tmp, `${name}.log`);
  const result: TargetResult = { target: name, url: '', ok: false, errors: 0, errorSamples: [], logPath };
  let governed: TargetResult | undefined;
  const extra: TargetResult[] = [];
  let gw: Started | undefined;
  try {
    let port: number;
    if (mode === 'embedded') {
      [port] = (await freePorts(1)) as [number];
      gw = start(
        'gw embedded',
        'src/embedded.ts',
        { ...baseEnv(), PORT: String(port), GATEWAY_DATA_DIR: dataDir, GATEWAY_CONFIG: configPath },
        logPath,
      );
    } else {
      await checkRedis();
      const [ingress, admin, router, governance] = (await freePorts(4)) as [number, number, number, number];
      port = ingress;
      gw = start(
        'gw cluster',
        'src/cluster.ts',
        {
          ...baseEnv(),
          REDIS_URL: params.redisUrl,
          GW_REDIS_PREFIX: redisPrefix,
          PORT: String(ingress),
          GW_ADMIN_PORT: String(admin),
          GW_ROUTER_PORT: String(router),
          GW_GOVERNANCE_PORT: String(governance),
          GW_GOVERNANCE_REPLICAS: '1',
          GW_ROUTER_REPLICAS: '1',
          GW_MCP_RUNNER_REPLICAS: '1',
          GW_INGRESS_REPLICAS: '1',
          GW_ADMIN_REPLICAS: '1',
          GATEWAY_DATA_DIR: dataDir,
          GATEWAY_CONFIG: configPath,
        },
        logPath,
        { group: true },
      );
    }
    const base = `http://${HOST}:${port}`;
    result.url = base + PATH;
    progress(`${mode}: started (pid ${gw.child.pid}), waiting for ${base}/health`);
    result.startup = await waitReady(gw, base);
    const cpu = mode === 'embedded' ? cpuMeter(gw.child.pid, mockUrl) : undefined;
    await cpu?.start();
    Object.assign(result, await measure(name, base, mockUrl, bodies.gw, bodies.gwStream, {}));
    if (cpu) result.cpuUsPerRequest = await cpu.perRequest();
    if (params.governed) {
      const target = `${name}+vk`;
      governed = { target, url: result.url, ok: false, errors: 0, errorSamples: [] };
      const before =
        mode === 'cluster' ? { redis: await redisCommandCalls(), mock: await mockStats(mockUrl) } : undefined;
      await cpu?.start();
      Object.assign(
        governed,
        await measure(target, base, mockUrl, bodies.gw, bodies.gwStream, { 'x-gw-vk': VIRTUAL_KEY }),
      );
      if (cpu) governed.cpuUsPerRequest = await cpu.perRequest();
      if (before) {
        // Script round trips per gateway request, warm-ups included: authorize's admission, then the settle.
        const calls = (await redisCommandCalls()) - before.redis;
        const upstream = delta(before.mock, await mockStats(mockUrl));
        const requests = upstream.requests;
        if (requests > 0) governed.redisCallsPerRequest = Math.round((calls / requests) * 100) / 100;
      }
      governed.ok = true;
    }
    if (params.guardrails) {
      // The same 4 KB prompt without and with the guardrail: the difference is what the check costs.
      for (const [suffix, headers] of [
        ['+4k', {}],
        ['+pii', { 'x-gw-guardrail-id': GUARDRAIL_RULE }],
      ] as const) {
        const target = `${mode}${suffix}`;
        const row: TargetResult = { target, url: result.url, ok: false, errors: 0, errorSamples: [] };
        Object.assign(row, await measure(target, base, mockUrl, bodies4k.gw, bodies4k.gwStream, headers));
        row.ok = true;
        extra.push(row);
      }
    }
    if (gw.child.exitCode !== null || gw.child.signalCode !== null) {
      throw new Error(`${gw.name} exited during the measurement:\n${logTail(logPath)}`);
    }
    result.ok = true;
  } catch (error) {
    result.failure = (error as Error).message;
    progress(`${mode}: FAILED: ${result.failure}`);
  } finally {
    if (gw) {
      progress(`${mode}: stopping (SIGTERM)`);
      result.shutdown = await stop(gw);
    }
    readLog(result);
  }
  return [result, ...(governed ? [governed] : []), ...extra];
}

/** CPU time of a process in ms (Linux /proc; its clock ticks are USER_HZ, 100 per second); undefined elsewhere. */
function processCpuMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return undefined;
  }
}

/** The gateway's CPU per upstream call between `start` and `perRequest` (the mock counts the calls). */
function cpuMeter(pid: number | undefined, mockUrl: string) {
  let from: { cpu: number | undefined; calls: MockStats } | undefined;
  return {
    async start() {
      from = { cpu: pid === undefined ? undefined : processCpuMs(pid), calls: await mockStats(mockUrl) };
    },
    async perRequest(): Promise<number | undefined> {
      const cpu = pid === undefined ? undefined : processCpuMs(pid);
      const calls = delta(from!.calls, await mockStats(mockUrl));
      const served = calls.requests;
      if (cpu === undefined || from?.cpu === undefined || served === 0) return undefined;
      return Math.round(((cpu - from.cpu) * 1000) / served);
    },
  };
}

/**
 * Lua script calls Redis has served (INFO commandstats `evalsha`/`eval`): each is one round trip, whatever
 * the script does inside (the commands a script runs are counted separately and are not round trips).
 */
async function redisCommandCalls(): Promise<number> {
  const redis = await redisClient();
  try {
    const info = await redis.info('commandstats');
    return [...info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+)/gm)].reduce(
      (sum, match) => sum + Number(match[1]),
      0,
    );
  } finally {
    redis.disconnect();
  }
}

async function redisClient(): Promise<Redis> {
  const redis = new Redis(params.redisUrl, {
    lazyConnect: true,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 1,
    retryStrategy: () => null,
  });
  await redis.connect();
  return redis;
}

async function checkRedis(): Promise<void> {
  let redis: Redis | undefined;
  try {
    redis = await redisClient();
    await redis.ping();
  } catch (error) {
    throw new Error(`Redis at ${params.redisUrl} is not reachable: ${(error as Error).message}`);
  } finally {
    redis?.disconnect();
  }
}

/** Deletes every key of this run (SCAN MATCH prefix* + DEL). */
async function deleteRunKeys(prefix: string): Promise<{ deleted: number; error?: string }> {
  let redis: Redis | undefined;
  let deleted = 0;
  try {
    redis = await redisClient();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== '0');
    return { deleted };
  } catch (error) {
    return { deleted, error: (error as Error).message };
  } finally {
    await redis?.quit().catch(() => {});
  }
}

// ---------------------------------------------------------------------------------------------- report

const ms = (value: number | undefined) =>
  value === undefined || Number.isNaN(value) ? '—' : value < 10 ? value.toFixed(3) : value.toFixed(1);
const signedMs = (value: number | undefined) =>
  value === undefined || Number.isNaN(value) ? '—' : (value < 0 ? '-' : '+') + ms(Math.abs(value));
const pct = (value: number | undefined) =>
  value === undefined || Number.isNaN(value) ? '—' : `${(value * 100).toFixed(1)}%`;

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows
    .map((row) =>
      row
        .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
        .join('  '),
    )
    .join('\n');
}

interface Overhead {
  target: string;
  serialP50Ms: number;
  serialP99Ms: number;
  serialMeanMs: number;
  throughputRatio: number;
  firstChunkP50Ms: number;
  firstChunkP99Ms: number;
}

function overheads(direct: TargetResult, results: TargetResult[]): Overhead[] {
  return results
    .filter((result) => result.ok)
    .map((result) => ({
      target: result.target,
      serialP50Ms: result.serial!.latency.p50 - direct.serial!.latency.p50,
      serialP99Ms: result.serial!.latency.p99 - direct.serial!.latency.p99,
      serialMeanMs: result.serial!.latency.mean - direct.serial!.latency.mean,
      throughputRatio: result.throughput!.rps / direct.throughput!.rps,
      firstChunkP50Ms: result.firstChunk!.latency.p50 - direct.firstChunk!.latency.p50,
      firstChunkP99Ms: result.firstChunk!.latency.p99 - direct.firstChunk!.latency.p99,
    }));
}

function report(date: Date, direct: TargetResult, results: TargetResult[], extra: string[]): string {
  const all = [direct, ...results];
  const c = params.concurrency;
  const measured = [
    [
      'target',
      'serial p50',
      'p99',
      'mean',
      `req/s c=${c}`,
      'vs direct',
      `p50@c=${c}`,
      `p99@c=${c}`,
      '1st chunk p50',
      'p99',
      'errors',
    ],
    ...all.map((result) =>
      result.ok
        ? [
            result.target,
            ms(result.serial!.latency.p50),
            ms(result.serial!.latency.p99),
            ms(result.serial!.latency.mean),
            result.throughput!.rps.toFixed(0),
            pct(result.throughput!.rps / direct.throughput!.rps),
            ms(result.throughput!.latency.p50),
            ms(result.throughput!.latency.p99),
            ms(result.firstChunk!.latency.p50),
            ms(result.firstChunk!.latency.p99),
            String(result.errors),
          ]
        : [result.target, 'FAILED', '', '', '', '', '', '', '', '', String(result.errors)],
    ),
  ];
  const overheadRows = [
    ['gw − direct', 'overhead p50', 'p99', 'mean', 'throughput % of direct', '1st chunk overhead p50', 'p99'],
    ...overheads(direct, results).map((o) => [
      o.target,
      signedMs(o.serialP50Ms),
      signedMs(o.serialP99Ms),
      signedMs(o.serialMeanMs),
      pct(o.throughputRatio),
      signedMs(o.firstChunkP50Ms),
      signedMs(o.firstChunkP99Ms),
    ]),
  ];
  const lines = [
    '',
    `gw bench ${date.toISOString()} — ${cpus().length} × ${cpus()[0]?.model.trim() ?? '?'}, node ${process.version}`,
    ...(params.tracing.some((ratio) => ratio !== undefined)
      ? ['+traceR: tracing on at sampling ratio R (BENCH_TRACING), spans exported to the mock']
      : []),
    ...(params.logs.some((logs) => logs !== undefined)
      ? ['+logs / +nologs: request logs on (metadata only, SQLite or the Redis stream) / off (BENCH_LOGS)']
      : []),
    `serial: ${params.serial} requests after ${params.serialWarmup} warm-up; throughput: c=${c} for ${params.durationMs} ms after ${params.warmupMs} ms warm-up; first chunk: ${params.streams} serial streams of ${params.streamChunks} chunks after ${params.streamWarmup} warm-up`,
    'latencies in ms',
    '',
    table(measured),
    '',
    table(overheadRows),
    '',
  ];
  for (const result of all) {
    if (!result.ok) lines.push(`${result.target} FAILED: ${result.failure}`);
    if (result.errors > 0) {
      lines.push(`${result.target}: ${result.errors} failed requests; first ones:`);
      for (const sample of result.errorSamples.slice(0, 5)) lines.push(`  ${JSON.stringify(sample)}`);
    }
    if (result.upstream) {
      const { serial: s, throughput: t, firstChunk: f } = result.upstream;
      const rejected = s.rejected + t.rejected + f.rejected;
      if (rejected > 0)
        lines.push(`${result.target}: the mock rejected ${rejected} upstream calls (wrong key/model)`);
      if (
        s.requests !== result.serial!.requests ||
        t.requests !== result.throughput!.requests ||
        f.streams !== result.firstChunk!.requests
      ) {
        lines.push(
          `${result.target}: upstream calls differ from client requests: serial ${s.requests}/${result.serial!.requests}, throughput ${t.requests}/${result.throughput!.requests}, streams ${f.streams}/${result.firstChunk!.requests}`,
        );
      }
    }
    if (result.logLines) {
      lines.push(
        `${result.target}: gw logged ${result.logLines} lines at LOG_LEVEL=warn; first: ${result.logHead?.[0]}`,
      );
    }
  }
  lines.push(...extra);
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------- main

async function main(): Promise<number> {
  const date = new Date();
  const tmp = mkdtempSync(join(tmpdir(), 'gw-bench-'));
  const redisPrefix = `gw-bench:${process.pid}:${date.getTime()}:`;
  const machine = {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim(),
    node: process.version,
    platform: process.platform,
    arch: process.arch,
    totalMemMb: Math.round(totalmem() / 2 ** 20),
    freeMemMb: Math.round(freemem() / 2 ** 20),
    loadavgAtStart: loadavg(),
  };
  progress(`temp dir ${tmp}; modes ${params.modes.join(',') || '(direct only)'}`);
  const { mock, url: mockUrl } = await startMock(tmp);
  progress(`mock upstream at ${mockUrl}`);
  const extra: string[] = [];
  let direct: TargetResult;
  const results: TargetResult[] = [];
  let redisCleanup: { prefix: string; deleted: number; error?: string } | undefined;
  try {
    direct = { target: 'direct', url: mockUrl + PATH, ok: false, errors: 0, errorSamples: [] };
    try {
      Object.assign(
        direct,
        await measure('direct', mockUrl, mockUrl, bodies.direct, bodies.directStream, {
          authorization: `Bearer ${API_KEY}`,
        }),
      );
      direct.ok = true;
    } catch (error) {
      direct.failure = (error as Error).message;
    }
    if (!direct.ok) throw new Error(`direct measurement failed: ${direct.failure}`);
    for (const [mode, tracing, logs] of params.modes.flatMap((mode) =>
      params.logs.flatMap((logs) => params.tracing.map((ratio) => [mode, ratio, logs] as const)),
    )) {
      const traced = await mockStats(mockUrl);
      const measured = await runMode(mode, tmp, mockUrl, redisPrefix, { tracing, logs });
      if (tracing !== undefined) {
        const now = await mockStats(mockUrl);
        const exports = (now.traceExports ?? 0) - (traced.traceExports ?? 0);
        const kib = Math.round(((now.traceBytes ?? 0) - (traced.traceBytes ?? 0)) / 1024);
        extra.push(
          `${measured[0]!.target}: the collector took ${exports} export requests (${kib} KiB of OTLP JSON)`,
        );
      }
      results.push(...measured);
      for (const result of measured) {
        if (result.cpuUsPerRequest !== undefined) {
          extra.push(`${result.target}: gw used ${result.cpuUsPerRequest} µs of CPU per request`);
        }
        if (result.redisCallsPerRequest !== undefined) {
          extra.push(
            `${result.target}: ${result.redisCallsPerRequest} Redis script round trips per request (authorize on the critical path, settle after it)`,
          );
        }
      }
      if (mode === 'cluster') {
        redisCleanup = { prefix: redisPrefix, ...(await deleteRunKeys(redisPrefix)) };
        extra.push(
          `redis: deleted ${redisCleanup.deleted} keys of ${redisPrefix}*${redisCleanup.error ? ` (error: ${redisCleanup.error})` : ''}`,
        );
      }
    }
  } finally {
    const mockStop = await stop(mock, 5_000);
    if (mockStop.killed) extra.push('mock upstream had to be killed');
  }

  const text = report(date, direct, results, extra);
  console.log(text);

  const failed = [direct, ...results].some((result) => !result.ok || result.errors > 0);
  const output = {
    date: date.toISOString(),
    machine,
    loadavgAtEnd: loadavg(),
    params: {
      ...params,
      redisUrl: params.redisUrl.replace(/\/\/[^@/]*@/, '//***@'),
      requestBody: { gw: JSON.parse(bodies.gw), direct: JSON.parse(bodies.direct) },
      redisPrefix,
    },
    ok: !failed,
    results: { direct, ...Object.fromEntries(results.map((result) => [result.target, result])) },
    overhead: Object.fromEntries(overheads(direct, results).map((o) => [o.target, o])),
    ...(redisCleanup ? { redisCleanup } : {}),
    printed: text,
  };
  mkdirSync(RESULTS, { recursive: true });
  const file = join(RESULTS, `${date.toISOString().replace(/:/g, '-')}.json`);
  const json = `${JSON.stringify(output, null, 2)}\n`;
  writeFileSync(file, json);
  writeFileSync(join(RESULTS, 'latest.json'), json);
  console.log(`\nresults: ${file}\n         ${join(RESULTS, 'latest.json')}`);
  if (process.env['BENCH_KEEP_TMP']) console.log(`temp dir kept: ${tmp}`);
  else rmSync(tmp, { recursive: true, force: true });
  if (failed) console.log('\nTHIS RUN HAD ERRORS OR FAILURES (see above); its figures are not clean.');
  return failed ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`bench failed: ${(error as Error).stack ?? error}`);
    process.exit(2);
  },
);
