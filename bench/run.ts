// `pnpm bench`: one benchmark run. Starts the mock upstream, measures it directly, then gw embedded and gw
// cluster in front of it (each in its own processes), and prints and saves the overhead and throughput.
// See bench/README.md for the figures and the BENCH_* knobs.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, freemem, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { request } from 'undici';
import {
  PII_GUARDRAIL,
  PII_GUARDRAIL_RULE,
  ROUTING_RULE_HEADER,
  ROUTING_RULES,
  VIRTUAL_KEY,
  VIRTUAL_KEY_CONFIG,
} from './gateway-variants.ts';
import {
  API_KEY,
  admissions,
  baseEnv,
  CHAT_PATH,
  delta,
  freePorts,
  HOST,
  intEnv,
  logTail,
  type MockStats,
  mockStats,
  type Probe,
  ROOT,
  type Started,
  scriptCalls,
  start,
  startMock,
  stop,
  table,
  waitReady,
} from './harness.ts';
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
import { type Peer, peerLaunches, peersEnv } from './peers.ts';
import {
  clusterProcesses,
  commandLine,
  cpuPerRequest,
  cpuSnapshot,
  type ProcessGroup,
  procAvailable,
  processTree,
  THREAD_KINDS,
  threadSnapshot,
  threadsPerRequest,
} from './process-cpu.ts';
import {
  formatSummary,
  type ProfileSummary,
  profileFiles,
  readProfile,
  type SummaryOptions,
  summarizeProfile,
} from './profile-summary.ts';
import { PROMPT_4K } from './prompt-4k.ts';

// ---------------------------------------------------------------------------------------------- parameters

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

/** `cluster-remote`: the cluster with GW_GOVERNANCE_ADMISSION=remote (each governed request calls governance). */
const MODES = ['embedded', 'cluster', 'cluster-remote'] as const;
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

/**
 * BENCH_GUARDRAILS: `off` or `pii`, comma-separated; each gw mode is measured once per entry. `pii` configures a
 * built-in PII guardrail whose rule applies only to requests that name it: the usual rows then measure
 * guardrails with no rule in force, and two more rows send a 4 KB prompt without, then with, the rule.
 * Unset: `off` alone.
 */
function guardrailsEnv(): Array<'pii' | undefined> {
  const raw = process.env['BENCH_GUARDRAILS'];
  if (raw === undefined || raw === '') return [undefined];
  return raw.split(',').map((entry) => {
    const value = entry.trim();
    if (value !== 'off' && value !== 'pii')
      throw new Error(`BENCH_GUARDRAILS: '${entry}' is neither off nor pii`);
    return value === 'pii' ? value : undefined;
  });
}

/**
 * BENCH_ROUTING: `off` or `rules`, comma-separated; each gw mode is measured once per entry. `rules` configures
 * ten global routing rules (docs/routing.md) that every request evaluates: the usual rows then measure ten rules
 * that do not match, and a `+rule` row sends a header the tenth one matches. Unset: `off` alone.
 */
function routingEnv(): Array<'rules' | undefined> {
  const raw = process.env['BENCH_ROUTING'];
  if (raw === undefined || raw === '') return [undefined];
  return raw.split(',').map((entry) => {
    const value = entry.trim();
    if (value !== 'off' && value !== 'rules')
      throw new Error(`BENCH_ROUTING: '${entry}' is neither off nor rules`);
    return value === 'rules' ? value : undefined;
  });
}

const RESULTS = join(ROOT, 'bench', 'results');
const peers = peersEnv(ROOT);

const params = {
  serial: intEnv('BENCH_SERIAL', 2000, 1),
  serialWarmup: intEnv('BENCH_WARMUP', 2_000),
  concurrency: intEnv('BENCH_CONCURRENCY', 50, 1),
  durationMs: intEnv('BENCH_DURATION_MS', 10_000, 1),
  warmupMs: intEnv('BENCH_WARMUP_MS', 8_000),
  streams: intEnv('BENCH_STREAMS', 500, 1),
  streamWarmup: intEnv('BENCH_STREAM_WARMUP', 50),
  /** Streams at the same concurrency, for this long (0: not measured): streams a second and CPU per stream. */
  streamDurationMs: intEnv('BENCH_STREAM_DURATION_MS', 5_000),
  /** Also measure every mode with a virtual key (governance counters on every request). */
  governed: process.env['BENCH_GOVERNED'] !== '0',
  streamChunks: intEnv('BENCH_STREAM_CHUNKS', 5, 1),
  modes: modesEnv(),
  guardrails: guardrailsEnv(),
  routing: routingEnv(),
  redisUrl: process.env['REDIS_URL'] || 'redis://127.0.0.1:6379',
  startTimeoutMs: intEnv('BENCH_START_TIMEOUT_MS', 60_000, 1),
  tracing: tracingEnv('BENCH_TRACING'),
  logs: logsEnv('BENCH_LOGS'),
  /**
   * BENCH_BASELINE: another checkout of gw (installed: `pnpm install` there) measured in the same run, each of
   * its measurements right before the same one of this checkout, rows named `…@base`: before and after a change.
   */
  baseline: process.env['BENCH_BASELINE'] || undefined,
  /** Peer gateways measured in the same run (BENCH_PEERS; unset: those installed). */
  peers: peers.peers,
  /** BENCH_CPU_PROF=1: every gw process runs with --cpu-prof, and the profiles are summarized after the run. */
  cpuProfile: process.env['BENCH_CPU_PROF'] === '1',
};

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

const gwProbe: Probe = { readyPath: '/health', body: bodies.gw, headers: {} };

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
  /** BENCH_STREAM_DURATION_MS: streams at the throughput phase's concurrency, with their CPU per stream. */
  streamThroughput?: PhaseResult & { ok: number; rps: number; elapsedMs: number; concurrency: number };
  streamCpu?: CpuResult;
  /** Calls the mock received during each measured phase (retries or lost calls would show here). */
  upstream?: {
    serial: MockStats;
    throughput: MockStats;
    firstChunk: MockStats;
    streamThroughput?: MockStats;
  };
  /** BENCH_CPU_PROF, on the first row of each gw launch: where each of its processes spent its CPU. */
  profiles?: ProfileResult[];
  /** CPU per request of each process of the target during the throughput phase (Linux). */
  cpu?: CpuResult;
  /** The row whose total CPU this row's is compared with (`× embedded`): the embedded row of the same variant. */
  cpuBaseline?: string;
  /** Governed cluster rows: Redis script round trips per request (INFO commandstats evalsha). */
  redisCallsPerRequest?: number;
  /**
   * Governed cluster rows: Redis round trips on the request's path per request (admissions the ingress could not
   * answer from its slices, `gw_governance_admissions_total{path="exact"}`), warm-ups included.
   */
  criticalRedisCallsPerRequest?: number;
  errors: number;
  errorSamples: ErrorSample[];
  logPath?: string;
  logLines?: number;
  logHead?: string[];
}

/**
 * CPU time (user + system, all threads, from /proc) each process of a target used during the c=50 throughput
 * phase, per upstream call the mock served in it, in µs. A loaded machine slows every wall-clock figure; this one
 * moves much less, so it compares builds and settings, and sums to what a request costs a cluster.
 */
interface CpuResult {
  requests: number;
  /** Per process group: a cluster service, `launcher`, `redis`, or `process` for a one-process gateway. */
  usPerRequest: Record<string, number | undefined>;
  /** The sum of the groups; undefined when one of them could not be read. */
  totalUs: number | undefined;
  /** Total over the baseline row's total (the embedded row without a key of the same variant). */
  timesEmbedded?: number;
  /** Redis commands per request during the phase (all clients: another user of this Redis shows up here). */
  redisCommandsPerRequest?: number;
  /** Bytes Redis read from and wrote to its clients per request (INFO stats), everyone's traffic included. */
  redisBytesInPerRequest?: number;
  redisBytesOutPerRequest?: number;
  pids: Record<string, number[]>;
  /** Per process group, µs per request by thread kind (process-cpu.ts ThreadKind). */
  threadsUsPerRequest?: Record<string, Record<string, number>>;
}

/** The processes whose CPU a target's throughput phase is measured on, found just before the phase. */
interface CpuProbe {
  groups: () => ProcessGroup[];
  /** Redis's count of commands processed (INFO stats), for the cluster rows. */
  redisCommands?: () => Promise<RedisCounts>;
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

/** How one target is measured: where, with which bodies and headers, and which processes' CPU is counted. */
interface MeasureOptions {
  base: string;
  mockUrl: string;
  body: string;
  streamBody: string;
  headers: Record<string, string>;
  cpu?: CpuProbe;
}

const MOCK_CONTENT = 'Hello! How can I help you today?';

/**
 * One request, checked more closely than the load generator does: the answer is the mock's chat completion, and
 * the mock served exactly one call for it (a target that answers without forwarding, or retries, fails here).
 */
async function checkForwarding(target: string, options: MeasureOptions): Promise<void> {
  const before = await mockStats(options.mockUrl);
  const { statusCode, body } = await request(options.base + CHAT_PATH, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: options.body,
    headersTimeout: 30_000,
    bodyTimeout: 30_000,
  });
  const text = await body.text();
  const calls = delta(before, await mockStats(options.mockUrl));
  let completion: { object?: unknown; choices?: Array<{ message?: { role?: unknown; content?: unknown } }> } =
    {};
  try {
    completion = JSON.parse(text);
  } catch {}
  const message = completion.choices?.[0]?.message;
  if (
    (statusCode !== 200 && statusCode !== 246) ||
    completion.object !== 'chat.completion' ||
    message?.role !== 'assistant' ||
    message.content !== MOCK_CONTENT
  ) {
    throw new Error(`${target}: not the mock's chat completion: ${statusCode} ${text.slice(0, 300)}`);
  }
  if (calls.requests !== 1 || calls.rejected !== 0) {
    throw new Error(
      `${target}: one request made ${calls.requests} upstream calls (${calls.rejected} rejected by the mock)`,
    );
  }
}

async function measure(
  target: string,
  options: MeasureOptions,
): Promise<Omit<TargetResult, 'target' | 'url' | 'ok'>> {
  const { base, mockUrl, body, streamBody, headers } = options;
  const url = base + CHAT_PATH;
  const buffer = Buffer.from(body);
  const streamBuffer = Buffer.from(streamBody);
  const samples: ErrorSample[] = [];
  let warmupErrors = 0;

  await checkForwarding(target, options);
  progress(`${target}: serial warm-up ${params.serialWarmup}, then ${params.serial} serial requests`);
  const warm = await serial(url, buffer, params.serialWarmup, { headers, phase: 'serial warm-up' });
  warmupErrors += warm.errors;
  samples.push(...warm.errorSamples);
  const before = await mockStats(mockUrl);
  const serialResult = await serial(url, buffer, params.serial, { headers, phase: 'serial' });
  samples.push(...serialResult.errorSamples);
  const afterSerial = await mockStats(mockUrl);

  progress(`${target}: c=${params.concurrency} warm-up ${params.warmupMs} ms, then ${params.durationMs} ms`);
  const completions = await loadPhase(url, buffer, options, {
    name: 'throughput',
    durationMs: params.durationMs,
  });
  warmupErrors += completions.warmupErrors;
  samples.push(...completions.samples);
  const { load, cpu, upstream: loadUpstream } = completions;

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

  let streamLoad: Awaited<ReturnType<typeof loadPhase>> | undefined;
  if (params.streamDurationMs > 0) {
    progress(`${target}: streams at c=${params.concurrency} for ${params.streamDurationMs} ms`);
    streamLoad = await loadPhase(url, streamBuffer, options, {
      name: 'stream throughput',
      durationMs: params.streamDurationMs,
      streams: true,
    });
    warmupErrors += streamLoad.warmupErrors;
    samples.push(...streamLoad.samples);
  }

  const serialPhase = phase(serialResult);
  const throughput = throughputPhase(load, params.concurrency);
  const streamPhase = phase(streams);
  const streamThroughput = streamLoad && throughputPhase(streamLoad.load, params.concurrency);
  return {
    warmupErrors,
    serial: serialPhase,
    throughput,
    firstChunk: streamPhase,
    ...(cpu ? { cpu } : {}),
    ...(streamThroughput && { streamThroughput }),
    ...(streamLoad?.cpu && { streamCpu: streamLoad.cpu }),
    upstream: {
      serial: delta(before, afterSerial),
      throughput: loadUpstream,
      firstChunk: delta(beforeStreams, afterStreams),
      ...(streamLoad && { streamThroughput: streamLoad.upstream }),
    },
    errors:
      warmupErrors +
      serialPhase.errors +
      throughput.errors +
      streamPhase.errors +
      (streamThroughput?.errors ?? 0),
    errorSamples: samples.slice(0, 10),
  };
}

/**
 * A warm-up, then `params.concurrency` connections sending back to back for `durationMs`, with the CPU each
 * process of the target used meanwhile per call the mock served in it (a stream per stream it served).
 */
async function loadPhase(
  url: string,
  buffer: Buffer,
  options: MeasureOptions,
  settings: { name: string; durationMs: number; streams?: boolean },
) {
  const { mockUrl, headers } = options;
  const samples: ErrorSample[] = [];
  let warmupErrors = 0;
  if (params.warmupMs > 0) {
    const warmLoad = await concurrent(
      url,
      buffer,
      { concurrency: params.concurrency, durationMs: params.warmupMs },
      { headers, phase: `${settings.name} warm-up` },
    );
    warmupErrors += warmLoad.errors;
    samples.push(...warmLoad.errorSamples);
  }
  const groups = procAvailable ? options.cpu?.groups() : undefined;
  const commandsBefore = await options.cpu?.redisCommands?.();
  const beforeLoad = await mockStats(mockUrl);
  const cpuBefore = groups && cpuSnapshot(groups);
  const threadsBefore = groups && threadSnapshot(groups);
  const load = await concurrent(
    url,
    buffer,
    { concurrency: params.concurrency, durationMs: settings.durationMs },
    { headers, phase: settings.name },
  );
  const cpuAfter = groups && cpuSnapshot(groups);
  const threadsAfter = groups && threadSnapshot(groups);
  samples.push(...load.errorSamples);
  const afterLoad = await mockStats(mockUrl);
  const commandsAfter = await options.cpu?.redisCommands?.();
  const upstream = delta(beforeLoad, afterLoad);
  const served = settings.streams ? upstream.streams : upstream.requests;
  let cpu: CpuResult | undefined;
  if (groups && cpuBefore && cpuAfter) {
    const usPerRequest = cpuPerRequest(cpuBefore, cpuAfter, served);
    const shares = Object.values(usPerRequest);
    cpu = {
      requests: served,
      usPerRequest,
      totalUs: shares.some((us) => us === undefined)
        ? undefined
        : shares.reduce<number>((sum, us) => sum + us!, 0),
      ...(commandsBefore !== undefined && commandsAfter !== undefined && served > 0
        ? {
            redisCommandsPerRequest:
              Math.round(((commandsAfter.commands - commandsBefore.commands) / served) * 100) / 100,
            redisBytesInPerRequest: Math.round((commandsAfter.bytesIn - commandsBefore.bytesIn) / served),
            redisBytesOutPerRequest: Math.round((commandsAfter.bytesOut - commandsBefore.bytesOut) / served),
          }
        : {}),
      pids: Object.fromEntries(groups.map((group) => [group.name, group.pids])),
      ...(threadsBefore &&
        threadsAfter && { threadsUsPerRequest: threadsPerRequest(threadsBefore, threadsAfter, served) }),
    };
  }
  return { load, cpu, upstream, warmupErrors, samples };
}

// ---------------------------------------------------------------------------------------------- gw modes

/** What one gw measurement turns on besides its mode. */
interface Variant {
  tracing: number | undefined;
  logs: boolean | undefined;
  /** BENCH_GUARDRAILS=pii: a guardrail configured whose rule applies only to the `+pii` rows. */
  guardrails?: 'pii' | undefined;
  /** BENCH_ROUTING=rules: ten routing rules evaluated by every request; the tenth matches the `+rule` row. */
  routing?: 'rules' | undefined;
  /** BENCH_BASELINE: the checkout whose gw runs (this one when undefined); its rows are named `…@base`. */
  root?: string | undefined;
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
      ...VIRTUAL_KEY_CONFIG,
      ...(variant.routing ? ['  routing_rules:', ...ROUTING_RULES] : []),
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
      ...(variant.guardrails ? PII_GUARDRAIL : []),
      '',
    ].join('\n'),
  );
  return path;
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

/** What every measurement of one run shares. */
interface RunContext {
  tmp: string;
  mockUrl: string;
  redisPrefix: string;
  /** The Redis server's pid, when it runs on this machine and /proc shows it (its CPU is then counted). */
  redisPid: number | undefined;
  /** BENCH_CPU_PROF: where the profiles of this run go, one directory per gw launch. */
  profileDir: string | undefined;
}

/** The profile summary of one gw process (BENCH_CPU_PROF). */
interface ProfileResult {
  process: string;
  file: string;
  summary: ProfileSummary;
}

async function runMode(
  mode: Mode,
  /** The sampling ratio (undefined: tracing off) and request logs (undefined: the default) of this measurement. */
  variant: Variant,
  run: RunContext,
): Promise<TargetResult[]> {
  const { tmp, mockUrl, redisPrefix } = run;
  const configPath = gwConfig(tmp, mockUrl, variant);
  const { tracing, logs } = variant;
  const suffix = `${logs === undefined ? '' : logs ? '+logs' : '+nologs'}${tracing === undefined ? '' : `+trace${tracing}`}${variant.guardrails ? '+guardrails' : ''}${variant.routing ? '+rules' : ''}${variant.root ? '@base' : ''}`;
  const name = `${mode}${suffix}`;
  const cpuBaseline = `embedded${suffix}`;
  // Every gw process inherits NODE_OPTIONS (the cluster's launcher passes its environment on to each service).
  const profileDir = run.profileDir && join(run.profileDir, name);
  const profiling = profileDir
    ? {
        NODE_OPTIONS: `${process.env['NODE_OPTIONS'] ?? ''} --cpu-prof --cpu-prof-dir="${profileDir}"`.trim(),
      }
    : {};
  const dataDir = mkdtempSync(join(tmp, `${mode}-data-`));
  const logPath = join(tmp, `${name}.log`);
  const result: TargetResult = {
    target: name,
    url: '',
    ok: false,
    errors: 0,
    errorSamples: [],
    logPath,
    cpuBaseline,
  };
  let governed: TargetResult | undefined;
  const extra: TargetResult[] = [];
  let gw: Started | undefined;
  /** The measured phases on the monotonic clock: the profiles are summarized over them, without startup. */
  let measuredWindow: SummaryOptions['window'];
  const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
  try {
    let port: number;
    if (mode === 'embedded') {
      [port] = (await freePorts(1)) as [number];
      gw = start(
        'gw embedded',
        'src/embedded.ts',
        {
          ...baseEnv(),
          ...profiling,
          PORT: String(port),
          GATEWAY_DATA_DIR: dataDir,
          GATEWAY_CONFIG: configPath,
        },
        logPath,
        { root: variant.root },
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
          ...profiling,
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
          GW_GOVERNANCE_ADMISSION: mode === 'cluster-remote' ? 'remote' : 'local',
          GATEWAY_DATA_DIR: dataDir,
          GATEWAY_CONFIG: configPath,
        },
        logPath,
        { group: true, root: variant.root },
      );
    }
    const base = `http://${HOST}:${port}`;
    result.url = base + CHAT_PATH;
    progress(`${mode}: started (pid ${gw.child.pid}), waiting for ${base}/health`);
    result.startup = await waitReady(gw, base, gwProbe, params.startTimeoutMs);
    const launcher = gw.child.pid!;
    const cpu: CpuProbe =
      mode === 'embedded'
        ? { groups: () => [{ name: 'process', pids: processTree(launcher) }] }
        : {
            groups: () => [
              ...clusterProcesses(launcher),
              ...(run.redisPid === undefined ? [] : [{ name: 'redis', pids: [run.redisPid] }]),
            ],
            redisCommands: redisCommandsProcessed,
          };
    const target = (
      name: string,
      headers: Record<string, string>,
      gwBodies: { gw: string; gwStream: string } = bodies,
    ) => measure(name, { base, mockUrl, body: gwBodies.gw, streamBody: gwBodies.gwStream, headers, cpu });
    measuredWindow = { fromUs: monotonicUs(), toUs: Number.POSITIVE_INFINITY };
    Object.assign(result, await target(name, {}));
    if (params.governed) {
      const name = `${result.target}+vk`;
      governed = { target: name, url: result.url, ok: false, errors: 0, errorSamples: [], cpuBaseline };
      const before =
        mode !== 'embedded'
          ? {
              redis: await redisCommandCalls(),
              mock: await mockStats(mockUrl),
              exact: (await admissions(base)).exact,
            }
          : undefined;
      Object.assign(governed, await target(name, { 'x-gw-vk': VIRTUAL_KEY }));
      if (before) {
        // Script round trips per gateway request, warm-ups included: authorize's admission, then the settle.
        const calls = (await redisCommandCalls()) - before.redis;
        const upstream = delta(before.mock, await mockStats(mockUrl));
        const requests = upstream.requests;
        if (requests > 0) governed.redisCallsPerRequest = Math.round((calls / requests) * 100) / 100;
        const exact = (await admissions(base)).exact - before.exact;
        if (requests > 0)
          governed.criticalRedisCallsPerRequest = Math.round((exact / requests) * 1000) / 1000;
      }
      governed.ok = true;
    }
    if (variant.routing) {
      // The same request matched by the tenth rule: nine evaluated and passed over, then the match routes it.
      const row: TargetResult = {
        target: `${name}+rule`,
        url: result.url,
        ok: false,
        errors: 0,
        errorSamples: [],
      };
      Object.assign(row, await target(row.target, { [ROUTING_RULE_HEADER]: '1' }));
      row.ok = true;
      extra.push(row);
    }
    if (variant.guardrails) {
      // The same 4 KB prompt without and with the guardrail: the difference is what the check costs.
      for (const [rowSuffix, headers] of [
        ['+4k', {}],
        ['+pii', { 'x-gw-guardrail-id': PII_GUARDRAIL_RULE }],
      ] as const) {
        const name = `${mode}${rowSuffix}`;
        const row: TargetResult = { target: name, url: result.url, ok: false, errors: 0, errorSamples: [] };
        Object.assign(row, await target(name, headers, bodies4k));
        row.ok = true;
        extra.push(row);
      }
    }
    measuredWindow.toUs = monotonicUs();
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
  const rows = [result, ...(governed ? [governed] : []), ...extra];
  if (profileDir && gw?.child.pid) {
    result.profiles = summarizeProfiles(profileDir, gw.child.pid, rows, measuredWindow);
  }
  return rows;
}

/** A peer gateway in its own process, in front of the same mock, measured like gw (its CPU too). */
async function runPeer(peer: Peer, run: RunContext): Promise<TargetResult> {
  const launch = peerLaunches[peer];
  const logPath = join(run.tmp, `${peer}.log`);
  const result: TargetResult = { target: peer, url: '', ok: false, errors: 0, errorSamples: [], logPath };
  const body = JSON.stringify({ model: launch.model, messages: message, max_tokens: 16 });
  const streamBody = JSON.stringify({ model: launch.model, messages: message, max_tokens: 16, stream: true });
  const headers = launch.headers(run.mockUrl, API_KEY);
  let started: Started | undefined;
  try {
    const [port] = (await freePorts(1)) as [number];
    const env = { ...process.env };
    // Its cache would go to this Redis; it is measured as it runs out of the box.
    delete env['REDIS_CONNECTION_STRING'];
    started = start(peer, launch.script, env, logPath, {
      nodeArgs: launch.nodeArgs,
      args: launch.args(port, run.mockUrl),
    });
    const base = `http://${HOST}:${port}`;
    result.url = base + CHAT_PATH;
    progress(`${peer}: started (pid ${started.child.pid}), waiting for ${base}${launch.readyPath}`);
    result.startup = await waitReady(
      started,
      base,
      { readyPath: launch.readyPath, body, headers },
      params.startTimeoutMs,
    );
    const pid = started.child.pid!;
    Object.assign(
      result,
      await measure(peer, {
        base,
        mockUrl: run.mockUrl,
        body,
        streamBody,
        headers,
        cpu: { groups: () => [{ name: 'process', pids: processTree(pid) }] },
      }),
    );
    if (started.child.exitCode !== null || started.child.signalCode !== null) {
      throw new Error(`${peer} exited during the measurement:\n${logTail(logPath)}`);
    }
    result.ok = true;
  } catch (error) {
    result.failure = (error as Error).message;
    progress(`${peer}: FAILED: ${result.failure}`);
  } finally {
    if (started) {
      progress(`${peer}: stopping (SIGTERM)`);
      result.shutdown = await stop(started, 10_000);
    }
  }
  return result;
}

/**
 * The profiles one gw launch wrote (at exit), each named by its process: from the pids the CPU measurement found
 * (the file name carries the pid), else from the main script in the profile.
 */
function summarizeProfiles(
  dir: string,
  launcher: number,
  rows: TargetResult[],
  window: SummaryOptions['window'],
): ProfileResult[] {
  const names = new Map<number, string>();
  for (const row of rows) {
    for (const [name, pids] of Object.entries(row.cpu?.pids ?? {}))
      for (const pid of pids) names.set(pid, name);
  }
  names.set(launcher, rows[0]!.target.startsWith('embedded') ? 'embedded' : 'launcher');
  let files: string[] = [];
  try {
    files = profileFiles(dir);
  } catch {}
  return files.map((file) => {
    // CPU.<date>.<time>.<pid>.<thread>.<sequence>.cpuprofile; thread 0 is the main thread, others are workers.
    const [, , , pid, thread] = file.split('/').pop()!.split('.');
    const summary = summarizeProfile(readProfile(file), { window });
    const process = names.get(Number(pid)) ?? summary.process ?? `pid ${pid}`;
    return { process: thread === '0' ? process : `${process} worker thread ${thread}`, file, summary };
  });
}

/** Lua script calls Redis has served (INFO commandstats `evalsha`/`eval`): each is one round trip. */
async function redisCommandCalls(): Promise<number> {
  const redis = await redisClient();
  try {
    return scriptCalls(await redis.info('commandstats'));
  } finally {
    redis.disconnect();
  }
}

/** Redis's own counts (INFO stats): commands processed (those scripts run included), bytes in and out. */
interface RedisCounts {
  commands: number;
  bytesIn: number;
  bytesOut: number;
}

async function redisCommandsProcessed(): Promise<RedisCounts> {
  const redis = await redisClient();
  try {
    const stats = await redis.info('stats');
    const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(stats)?.[1]);
    return {
      commands: field('total_commands_processed'),
      bytesIn: field('total_net_input_bytes'),
      bytesOut: field('total_net_output_bytes'),
    };
  } finally {
    redis.disconnect();
  }
}

/**
 * The Redis server's pid (INFO server `process_id`) when /proc shows that process as a redis-server: a Redis in a
 * container or on another machine has a pid that means nothing here, and its CPU is then left out.
 */
async function redisServerPid(): Promise<{ pid?: number; note?: string }> {
  if (!procAvailable) return {};
  const redis = await redisClient();
  try {
    const pid = Number(/^process_id:(\d+)/m.exec(await redis.info('server'))?.[1]);
    if (commandLine(pid).includes('redis-server')) return { pid };
    return { note: `redis: pid ${pid} (INFO server) is no redis-server here; its CPU is not counted` };
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

/** The CPU table's columns: each cluster service, the launcher, a one-process gateway, Redis. */
const CPU_COLUMNS: Array<[string, string]> = [
  ['ingress', 'ingress'],
  ['router', 'router'],
  ['governance', 'governance'],
  ['mcp-runner', 'mcp-runner'],
  ['admin', 'admin'],
  ['launcher', 'launcher'],
  ['process', 'one process'],
  ['redis', 'redis'],
];

/**
 * Sets each row's `× embedded`: its total CPU per request over that of the embedded row without a key of the same
 * variant (a peer: the first embedded row).
 */
function compareCpu(results: TargetResult[]): void {
  const firstEmbedded = results.find(
    (row) => row.cpuBaseline !== undefined && row.cpuBaseline === row.target,
  );
  for (const row of results) {
    const baseline = results.find((other) => other.target === (row.cpuBaseline ?? firstEmbedded?.target));
    for (const pick of [(of: TargetResult) => of.cpu, (of: TargetResult) => of.streamCpu]) {
      const cpu = pick(row);
      const reference = baseline && pick(baseline)?.totalUs;
      if (cpu?.totalUs !== undefined && reference) {
        cpu.timesEmbedded = Math.round((cpu.totalUs / reference) * 100) / 100;
      }
    }
  }
}

/** /proc counts CPU in ticks of 10 ms: one tick, spread over the phase's requests, is the figures' resolution. */
const TICK_US = 10_000;

function cpuTable(
  results: TargetResult[],
  title: string,
  pick: (row: TargetResult) => CpuResult | undefined,
): string[] {
  const rows = results.filter((row) => row.ok && pick(row));
  if (rows.length === 0) return [];
  const others = [...new Set(rows.flatMap((row) => Object.keys(pick(row)!.usPerRequest)))].filter(
    (name) => !CPU_COLUMNS.some(([key]) => key === name),
  );
  const columns = [...CPU_COLUMNS, ...others.map((name): [string, string] => [name, name])];
  const us = (value: number | undefined) => (value === undefined ? '—' : String(value));
  return [
    title,
    '',
    table([
      [
        'target',
        ...columns.map(([, header]) => header),
        'total',
        '× embedded',
        '1 tick',
        'redis cmds/req',
        'redis B in/out per req',
      ],
      ...rows.map((row) => {
        const cpu = pick(row)!;
        return [
          row.target,
          ...columns.map(([key]) => (key in cpu.usPerRequest ? us(cpu.usPerRequest[key]) : '')),
          us(cpu.totalUs),
          cpu.timesEmbedded === undefined ? '—' : `${cpu.timesEmbedded.toFixed(2)}×`,
          cpu.requests === 0 ? '—' : us(Math.round(TICK_US / cpu.requests)),
          cpu.redisCommandsPerRequest === undefined ? '' : cpu.redisCommandsPerRequest.toFixed(2),
          cpu.redisBytesInPerRequest === undefined
            ? ''
            : `${cpu.redisBytesInPerRequest}/${cpu.redisBytesOutPerRequest}`,
        ];
      }),
    ]),
    '',
    'the same by thread, µs per request: main (the event loop) / V8 (its GC and compiler threads) / other threads (worker threads: request logs, span export; libuv)',
    '',
    table([
      ['target', 'process', ...THREAD_KINDS],
      ...rows.flatMap((row) =>
        Object.entries(pick(row)!.threadsUsPerRequest ?? {})
          .filter(([, kinds]) => THREAD_KINDS.some((kind) => (kinds[kind] ?? 0) > 0))
          .map(([name, kinds]) => [
            row.target,
            name,
            ...THREAD_KINDS.map((kind) => String(kinds[kind] ?? 0)),
          ]),
      ),
    ]),
    '',
  ];
}

/** BENCH_STREAM_DURATION_MS: streams a second at c=50 beside direct and the peer, and their CPU per stream. */
function streamTables(
  direct: TargetResult,
  results: TargetResult[],
  peer: TargetResult | undefined,
): string[] {
  const c = params.concurrency;
  const rows = [direct, ...results].filter((row) => row.ok && row.streamThroughput);
  if (rows.length === 0 || !direct.streamThroughput) return [];
  const rps = (row: TargetResult) => row.streamThroughput!.rps;
  return [
    `streams at c=${c} for ${params.streamDurationMs} ms after ${params.warmupMs} ms warm-up (${params.streamChunks} chunks each, read to [DONE])`,
    '',
    table([
      ['target', 'streams/s', 'vs direct', 'vs portkey', 'p50', 'p99', 'errors'],
      ...rows.map((row) => [
        row.target,
        rps(row).toFixed(0),
        pct(rps(row) / rps(direct)),
        peer?.streamThroughput ? `${(rps(row) / rps(peer)).toFixed(2)}×` : '—',
        ms(row.streamThroughput!.latency.p50),
        ms(row.streamThroughput!.latency.p99),
        String(row.streamThroughput!.errors),
      ]),
    ]),
    '',
    ...cpuTable(
      results,
      `CPU µs per stream at c=${c}, by process (/proc utime+stime during the stream phase ÷ streams the mock served in it)`,
      (row) => row.streamCpu,
    ),
  ];
}

/**
 * Every row beside the floor (bench/floor-proxy.ts, the least a Node gateway does): its CPU per request and per
 * stream, serial p50 overhead and throughput as multiples of the floor's, and its first chunk's overhead as the
 * milliseconds above the floor's (issue 43's goals are said in these terms).
 */
function floorTable(direct: TargetResult, results: TargetResult[]): string[] {
  const floor = results.find((result) => result.ok && result.target === 'floor');
  if (!floor) return [];
  const over = overheads(direct, results);
  const floorOver = over.find((o) => o.target === 'floor')!;
  const times = (value: number | undefined, reference: number | undefined) =>
    value === undefined || !reference ? '—' : `${(value / reference).toFixed(2)}×`;
  return [
    'against the floor (a minimal Node proxy: parse, rewrite the model, undici, write back; bench/floor-proxy.ts)',
    '',
    table([
      [
        'target',
        'CPU µs/req',
        '× floor',
        'p50 overhead',
        '× floor',
        '1st chunk overhead',
        '− floor',
        `req/s c=${params.concurrency}`,
        '× floor',
        'CPU µs/stream',
        '× floor',
      ],
      ...results
        .filter((row) => row.ok)
        .map((row) => {
          const o = over.find((each) => each.target === row.target)!;
          return [
            row.target,
            row.cpu?.totalUs === undefined ? '—' : String(row.cpu.totalUs),
            times(row.cpu?.totalUs, floor.cpu?.totalUs),
            signedMs(o.serialP50Ms),
            times(o.serialP50Ms, floorOver.serialP50Ms),
            signedMs(o.firstChunkP50Ms),
            signedMs(o.firstChunkP50Ms - floorOver.firstChunkP50Ms),
            row.throughput!.rps.toFixed(0),
            times(row.throughput!.rps, floor.throughput!.rps),
            row.streamCpu?.totalUs === undefined ? '—' : String(row.streamCpu.totalUs),
            times(row.streamCpu?.totalUs, floor.streamCpu?.totalUs),
          ];
        }),
    ]),
    '',
  ];
}

function report(date: Date, direct: TargetResult, results: TargetResult[], extra: string[]): string {
  const all = [direct, ...results];
  const c = params.concurrency;
  const peer = results.find((result) => result.ok && result.target === 'portkey');
  const vsPeer = (result: TargetResult) =>
    peer ? `${(result.throughput!.rps / peer.throughput!.rps).toFixed(2)}×` : '—';
  const measured = [
    [
      'target',
      'serial p50',
      'p99',
      'mean',
      `req/s c=${c}`,
      'vs direct',
      'vs portkey',
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
            vsPeer(result),
            ms(result.throughput!.latency.p50),
            ms(result.throughput!.latency.p99),
            ms(result.firstChunk!.latency.p50),
            ms(result.firstChunk!.latency.p99),
            String(result.errors),
          ]
        : [result.target, 'FAILED', '', '', '', '', '', '', '', '', '', String(result.errors)],
    ),
  ];
  const overheadRows = [
    ['− direct', 'overhead p50', 'p99', 'mean', 'throughput % of direct', '1st chunk overhead p50', 'p99'],
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
    ...(params.routing.some((routing) => routing !== undefined)
      ? [
          '+rules: ten routing rules evaluated by every request, the tenth matching the +rule rows (BENCH_ROUTING)',
        ]
      : []),
    ...(params.guardrails.some((guardrails) => guardrails !== undefined)
      ? [
          '+guardrails: a PII guardrail configured, its rule in force only on the +pii rows (BENCH_GUARDRAILS)',
        ]
      : []),
    `serial: ${params.serial} requests after ${params.serialWarmup} warm-up; throughput: c=${c} for ${params.durationMs} ms after ${params.warmupMs} ms warm-up; first chunk: ${params.streams} serial streams of ${params.streamChunks} chunks after ${params.streamWarmup} warm-up`,
    'latencies in ms',
    '',
    table(measured),
    '',
    table(overheadRows),
    '',
    ...cpuTable(
      results,
      `CPU µs per request at c=${c}, by process (/proc utime+stime during the throughput phase ÷ calls the mock served in it)`,
      (row) => row.cpu,
    ),
    ...streamTables(direct, results, peer),
    ...floorTable(direct, results),
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
  const { mock, url: mockUrl } = await startMock(tmp, params.streamChunks);
  progress(`mock upstream at ${mockUrl}`);
  const extra: string[] = [...peers.notes];
  if (!procAvailable) extra.push('CPU per process is not measured: no /proc (Linux only)');
  let direct: TargetResult;
  const results: TargetResult[] = [];
  let redisCleanup: { prefix: string; deleted: number; error?: string } | undefined;
  const run: RunContext = {
    tmp,
    mockUrl,
    redisPrefix,
    redisPid: undefined,
    profileDir: params.cpuProfile
      ? join(RESULTS, `prof-${date.toISOString().replace(/:/g, '-')}`)
      : undefined,
  };
  if (params.modes.some((mode) => mode !== 'embedded')) {
    await checkRedis();
    const redis = await redisServerPid();
    run.redisPid = redis.pid;
    if (redis.note) extra.push(redis.note);
  }
  try {
    direct = { target: 'direct', url: mockUrl + CHAT_PATH, ok: false, errors: 0, errorSamples: [] };
    try {
      Object.assign(
        direct,
        await measure('direct', {
          base: mockUrl,
          mockUrl,
          body: bodies.direct,
          streamBody: bodies.directStream,
          headers: { authorization: `Bearer ${API_KEY}` },
        }),
      );
      direct.ok = true;
    } catch (error) {
      direct.failure = (error as Error).message;
    }
    if (!direct.ok) throw new Error(`direct measurement failed: ${direct.failure}`);
    for (const peer of params.peers) results.push(await runPeer(peer, run));
    // BENCH_BASELINE: each measurement of the baseline checkout right before the same one of this checkout.
    const roots = params.baseline ? [params.baseline, undefined] : [undefined];
    for (const [mode, tracing, logs, guardrails, routing, root] of params.modes.flatMap((mode) =>
      params.logs.flatMap((logs) =>
        params.guardrails.flatMap((guardrails) =>
          params.routing.flatMap((routing) =>
            params.tracing.flatMap((ratio) =>
              // A baseline from before routing rules has none to configure: its rows are the rule-less ones.
              (routing ? [undefined] : roots).map(
                (root) => [mode, ratio, logs, guardrails, routing, root] as const,
              ),
            ),
          ),
        ),
      ),
    )) {
      const traced = await mockStats(mockUrl);
      const measured = await runMode(mode, { tracing, logs, guardrails, routing, root }, run);
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
        if (result.redisCallsPerRequest !== undefined) {
          extra.push(
            `${result.target}: ${result.redisCallsPerRequest} Redis script round trips per request (slices, settles and exact admissions), ${result.criticalRedisCallsPerRequest ?? '?'} on the request's path`,
          );
        }
      }
      if (mode !== 'embedded') {
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

  compareCpu(results);
  const text = report(date, direct, results, extra);
  console.log(text);
  const profiles = results.flatMap((result) =>
    (result.profiles ?? []).map((profile) => ({ launch: result.target, ...profile })),
  );
  if (run.profileDir) {
    console.log(
      `\nCPU profiles (BENCH_CPU_PROF), summarized over the measured phases of each launch (no startup): ${run.profileDir}` +
        '\nThe profiler slows every process: the figures of this run are not comparable with those of a run without it.',
    );
    if (profiles.length === 0)
      console.log('no profile was written (a process killed rather than stopped writes none)');
    for (const profile of profiles) {
      console.log(
        `\n${formatSummary(`${profile.launch} / ${profile.process} (${profile.file})`, profile.summary)}`,
      );
    }
  }

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
    cpu: Object.fromEntries(
      results.filter((result) => result.cpu).map((result) => [result.target, result.cpu]),
    ),
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
