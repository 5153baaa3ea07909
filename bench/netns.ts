// `pnpm bench:netns` (Linux, root): gw's cluster with every service in its own network namespace, joined by veth
// pairs through a bridge, with `tc netem` delay on each namespace's egress (BENCH_NETNS_DELAYS ms per one-way
// hop), to show what each hop costs when the services are on different nodes. A private Redis and the mock
// upstream get namespaces of their own; the load generator runs in a client namespace. See bench/README.md.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { VIRTUAL_KEY, VIRTUAL_KEY_CONFIG } from './gateway-variants.ts';
import { intEnv } from './harness.ts';
import type { Job, MeasureJob, MeasureResult } from './netns-load.ts';
import {
  createNetwork,
  destroyNetwork,
  inNamespace,
  missingPrerequisite,
  type Network,
  netemError,
  type Packets,
  packetCounters,
  ROLES,
  type Role,
  runInNamespace,
  setDelay,
} from './netns-network.ts';
import { formatReport, type RoundTrips, type TargetRun } from './netns-report.ts';

// ---------------------------------------------------------------------------------------------- parameters

/** BENCH_NETNS_DELAYS: one-way delay per hop in ms, comma-separated, measured in that order. */
function delaysEnv(): number[] {
  const raw = process.env['BENCH_NETNS_DELAYS'] || '0,0.1,0.5';
  return raw.split(',').map((entry) => {
    const value = Number(entry.trim());
    if (entry.trim() === '' || !(value >= 0 && value <= 100)) {
      throw new Error(`BENCH_NETNS_DELAYS: '${entry}' is not a delay in ms (0-100)`);
    }
    return value;
  });
}

const params = {
  delays: delaysEnv(),
  serial: intEnv('BENCH_SERIAL', 1000, 1),
  serialWarmup: intEnv('BENCH_WARMUP', 100),
  concurrency: intEnv('BENCH_CONCURRENCY', 50, 1),
  durationMs: intEnv('BENCH_DURATION_MS', 5_000, 1),
  warmupMs: intEnv('BENCH_WARMUP_MS', 1_000),
  streams: intEnv('BENCH_STREAMS', 300, 1),
  streamWarmup: intEnv('BENCH_STREAM_WARMUP', 30),
  streamChunks: intEnv('BENCH_STREAM_CHUNKS', 5, 1),
  startTimeoutMs: intEnv('BENCH_START_TIMEOUT_MS', 60_000, 1),
};

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const RESULTS = join(ROOT, 'bench', 'results');
const PATH = '/v1/chat/completions';
const API_KEY = 'sk-bench';
/** Fixed ports: every listener is alone on its namespace's address. */
const PORTS = { ingress: 8080, router: 7101, gov: 7201, redis: 6379, mock: 8000 } as const;

const message = [{ role: 'user', content: 'hello' }];
const chat = (model: string, stream: boolean) =>
  JSON.stringify({ model, messages: message, max_tokens: 16, ...(stream ? { stream: true } : {}) });

// ---------------------------------------------------------------------------------------------- processes

interface Started {
  name: string;
  child: ChildProcess;
  exited: Promise<void>;
  logPath: string;
}

const running = new Set<Started>();

/** A program in a role's namespace, its output to a log (stdout piped when asked). */
function startIn(
  network: Network,
  role: Role,
  command: {
    name: string;
    program: string;
    args: string[];
    env: NodeJS.ProcessEnv;
    logPath: string;
    /** Read stdout (the mock's port line, the load generator's JSON); else it goes to the log too. */
    stdout?: 'pipe';
  },
): Started {
  const log = openSync(command.logPath, 'a');
  const line = inNamespace(network.namespace(role), command.program, command.args);
  const child = spawn(line.file, line.args, {
    cwd: ROOT,
    env: command.env,
    stdio: ['ignore', command.stdout ?? log, log],
  });
  closeSync(log);
  // 'close': the process has exited and its stdout is read to the end (the load generator's JSON).
  const exited = new Promise<void>((resolve) => {
    child.on('close', () => resolve());
    child.on('error', () => resolve());
  });
  const started: Started = { name: command.name, child, exited, logPath: command.logPath };
  running.add(started);
  void exited.then(() => running.delete(started));
  return started;
}

const alive = (started: Started) => started.child.exitCode === null && started.child.signalCode === null;

function logTail(path: string, lines = 20): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** SIGTERM to every process this run started, then SIGKILL to those still there after `timeoutMs`. */
async function stopAll(timeoutMs = 10_000): Promise<void> {
  const all = [...running];
  for (const started of all) if (alive(started)) started.child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    Promise.all(all.map((started) => started.exited)),
    new Promise((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  for (const started of all) if (alive(started)) started.child.kill('SIGKILL');
}

/** One job of the load generator in the client namespace; its JSON answer. */
async function loadJob<T>(network: Network, job: Job, logPath: string): Promise<T> {
  const started = startIn(network, 'client', {
    name: 'load',
    program: process.execPath,
    args: [join(ROOT, 'bench', 'netns-load.ts'), JSON.stringify(job)],
    env: baseEnv(),
    logPath,
    stdout: 'pipe',
  });
  let output = '';
  started.child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  await started.exited;
  if (started.child.exitCode !== 0) {
    throw new Error(`load generator (${job.kind}) failed (${started.child.exitCode}):\n${logTail(logPath)}`);
  }
  return JSON.parse(output) as T;
}

function progress(text: string): void {
  process.stderr.write(`[bench:netns] ${text}\n`);
}

// ---------------------------------------------------------------------------------------------- the cluster

function writeConfig(tmp: string, mockUrl: string): string {
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
      ...VIRTUAL_KEY_CONFIG,
      '',
    ].join('\n'),
  );
  return path;
}

/** The parent's environment without anything that would point gw elsewhere than this run's namespaces. */
function baseEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    const upper = name.toUpperCase();
    if (
      upper.startsWith('GW_') ||
      upper.startsWith('GATEWAY_') ||
      upper.startsWith('OTEL_') ||
      upper.endsWith('_PROXY') ||
      upper === 'REDIS_URL' ||
      upper === 'PORT'
    ) {
      delete env[name];
    }
  }
  return { ...env, LOG_LEVEL: 'warn' };
}

/** The services on a chat request's path (admin and mcp-runner are not on it, and are not started). */
const SERVICES = [
  { role: 'gov', service: 'governance' },
  { role: 'router', service: 'router' },
  { role: 'ingress', service: 'ingress' },
] as const;

async function startCluster(network: Network, tmp: string) {
  const at = (role: keyof typeof PORTS) => `${network.address(role)}:${PORTS[role]}`;
  const redis = startIn(network, 'redis', {
    name: 'redis',
    program: 'redis-server',
    // Protected mode refuses clients from other addresses than loopback without a password; this Redis is
    // reachable only from this run's namespaces.
    args: [
      ...['--port', String(PORTS.redis), '--bind', network.address('redis'), '--protected-mode', 'no'],
      ...['--save', '', '--appendonly', 'no'],
    ],
    env: baseEnv(),
    logPath: join(tmp, 'redis.log'),
  });
  const mock = startIn(network, 'mock', {
    name: 'mock',
    program: process.execPath,
    args: [join(ROOT, 'bench', 'netns-mock.ts')],
    env: {
      ...baseEnv(),
      MOCK_HOST: network.address('mock'),
      MOCK_PORT: String(PORTS.mock),
      MOCK_STREAM_CHUNKS: String(params.streamChunks),
      MOCK_API_KEY: API_KEY,
    },
    logPath: join(tmp, 'mock.log'),
    stdout: 'pipe',
  });
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: mock.child.stdout! }).once('line', () => resolve());
    void mock.exited.then(() => reject(new Error(`the mock exited: ${logTail(mock.logPath)}`)));
  });
  await waitForRedis(network, redis);
  const mockUrl = `http://${at('mock')}`;
  const shared = {
    ...baseEnv(),
    GATEWAY_CONFIG: writeConfig(tmp, mockUrl),
    GATEWAY_DATA_DIR: mkdtempSync(join(tmp, 'data-')),
    GW_CLUSTER_TOKEN: randomBytes(32).toString('hex'),
    REDIS_URL: `redis://${at('redis')}`,
    GW_ROUTER_ADDR: at('router'),
    GW_GOVERNANCE_ADDR: at('gov'),
    GW_ROUTER_PORT: String(PORTS.router),
    GW_GOVERNANCE_PORT: String(PORTS.gov),
    PORT: String(PORTS.ingress),
    // As src/cluster.ts does without a log database: ingress appends no records to the Redis stream.
    GW_LOGS_STREAM: 'off',
  };
  const services = new Map<Role, Started>([['redis', redis]]);
  for (const { role, service } of SERVICES) {
    services.set(
      role,
      startIn(network, role, {
        name: service,
        program: process.execPath,
        args: [join(ROOT, 'services', service, 'src', 'main.ts')],
        env: { ...shared, GW_HOST: network.address(role) },
        logPath: join(tmp, `${service}.log`),
      }),
    );
  }
  services.set('mock', mock);
  const ingressUrl = `http://${at('ingress')}`;
  const { readyMs } = await loadJob<{ readyMs: number }>(
    network,
    {
      kind: 'ready',
      base: ingressUrl,
      path: PATH,
      body: chat('openai/gpt-4o-mini', false),
      probes: [{}, { 'x-gw-vk': VIRTUAL_KEY }],
      timeoutMs: params.startTimeoutMs,
    },
    join(tmp, 'load.log'),
  );
  for (const [role, started] of services) {
    if (!alive(started)) throw new Error(`${role} exited during startup:\n${logTail(started.logPath)}`);
  }
  return { mockUrl, ingressUrl, services, readyMs };
}

async function waitForRedis(network: Network, redis: Started): Promise<void> {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (!alive(redis)) throw new Error(`redis-server exited: ${logTail(redis.logPath)}`);
    if (redisCli(network, ['ping']).trim() === 'PONG') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('redis-server did not answer PING in 10 s');
}

const redisCliTarget = (network: Network) => ['-h', network.address('redis'), '-p', String(PORTS.redis)];

function redisCli(network: Network, args: string[]): string {
  return runInNamespace(network.namespace('redis'), 'redis-cli', [...redisCliTarget(network), ...args]);
}

/** Calls per Redis command so far (INFO commandstats; commands run inside scripts are counted too). */
function redisCommands(network: Network): Record<string, number> {
  const calls: Record<string, number> = {};
  for (const match of redisCli(network, ['info', 'commandstats']).matchAll(
    /^cmdstat_([^:]+):calls=(\d+)/gm,
  )) {
    if (match[1] !== 'info' && match[1] !== 'ping') calls[match[1]!] = Number(match[2]);
  }
  return calls;
}

/** CPU time (user + system) of a process in ms, from /proc (clock ticks of 10 ms). */
function cpuMs(pid: number | undefined): number {
  if (pid === undefined) return 0;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

// ---------------------------------------------------------------------------------------------- measurement

interface Counters {
  redis: Record<string, number>;
  packets: Packets;
  cpu: Record<string, number>;
}

function counters(network: Network, services: Map<Role, Started>): Counters {
  return {
    redis: redisCommands(network),
    packets: packetCounters(network),
    cpu: Object.fromEntries([...services].map(([role, started]) => [role, cpuMs(started.child.pid)])),
  };
}

const perRequest = (from: Record<string, number>, to: Record<string, number>, requests: number) =>
  Object.fromEntries(
    Object.entries(to)
      .map(([name, value]) => [name, requests > 0 ? (value - (from[name] ?? 0)) / requests : 0] as const)
      .filter(([, value]) => value > 0),
  );

/** What is measured at each delay; the gw targets go through the ingress, the direct one to the mock itself. */
const TARGETS = [
  { target: 'direct', headers: { authorization: `Bearer ${API_KEY}` } },
  { target: 'cluster', headers: {} },
  { target: 'cluster+vk', headers: { 'x-gw-vk': VIRTUAL_KEY } },
] as const;

function jobFor(target: (typeof TARGETS)[number], urls: { mockUrl: string; ingressUrl: string }): MeasureJob {
  const direct = target.target === 'direct';
  const model = direct ? 'gpt-4o-mini' : 'openai/gpt-4o-mini';
  return {
    kind: 'measure',
    url: (direct ? urls.mockUrl : urls.ingressUrl) + PATH,
    body: chat(model, false),
    streamBody: chat(model, true),
    headers: target.headers,
    serial: params.serial,
    serialWarmup: params.serialWarmup,
    concurrency: params.concurrency,
    durationMs: params.durationMs,
    warmupMs: params.warmupMs,
    streams: params.streams,
    streamWarmup: params.streamWarmup,
    statsUrl: `${urls.mockUrl}/__stats`,
    ...(direct ? {} : { metricsUrl: `${urls.ingressUrl}/metrics` }),
  };
}

/** Requests of the round-trip count: serial, at no delay, apart from the measurement (MONITOR slows Redis). */
const COUNTED_REQUESTS = 200;

/**
 * Round trips per request of one target: the ingress's gRPC calls by method, and the commands Redis received by
 * client (MONITOR: one line per command; `[… lua]` lines are commands a script ran, not round trips).
 */
async function countRoundTrips(
  network: Network,
  tmp: string,
  { target, job }: { target: string; job: MeasureJob },
): Promise<RoundTrips> {
  const monitor = startIn(network, 'redis', {
    name: 'redis monitor',
    program: 'redis-cli',
    args: [...redisCliTarget(network), 'monitor'],
    env: baseEnv(),
    logPath: join(tmp, 'monitor.log'),
    stdout: 'pipe',
  });
  const lines = createInterface({ input: monitor.child.stdout! });
  await new Promise<void>((resolve, reject) => {
    lines.once('line', () => resolve());
    void monitor.exited.then(() =>
      reject(new Error(`redis-cli monitor exited: ${logTail(monitor.logPath)}`)),
    );
  });
  const roles = new Map<string, string>(ROLES.map((role) => [network.address(role), role]));
  const redis: Record<string, number> = {};
  let scriptCommands = 0;
  lines.on('line', (line) => {
    const match = /^\d+\.\d+ \[\d+ (\S+)\] "([^"]*)"/.exec(line);
    if (!match) return;
    if (match[1] === 'lua') {
      scriptCommands++;
      return;
    }
    const key = `${roles.get(match[1]!.replace(/:\d+$/, '')) ?? match[1]} ${match[2]!.toLowerCase()}`;
    redis[key] = (redis[key] ?? 0) + 1;
  });
  const only = {
    serialWarmup: 0,
    serial: COUNTED_REQUESTS,
    warmupMs: 0,
    durationMs: 0,
    streams: 0,
    streamWarmup: 0,
  };
  const result = await loadJob<MeasureResult>(network, { ...job, ...only }, join(tmp, 'load.log'));
  // The settle of the last requests comes after their answers.
  await new Promise((resolve) => setTimeout(resolve, 500));
  monitor.child.kill('SIGTERM');
  await monitor.exited;
  const requests = result.upstreamCalls;
  return {
    target,
    requests,
    errors: result.errors,
    grpc: perRequest({}, result.grpcCalls, requests),
    redis: perRequest({}, redis, requests),
    scriptCommands: requests > 0 ? scriptCommands / requests : 0,
  };
}

async function run(network: Network, tmp: string): Promise<{ runs: TargetRun[]; roundTrips: RoundTrips[] }> {
  const { mockUrl, ingressUrl, services, readyMs } = await startCluster(network, tmp);
  progress(`cluster ready in ${readyMs} ms (ingress ${ingressUrl}, mock ${mockUrl})`);
  const targets = TARGETS.map((target) => ({
    target: target.target,
    job: jobFor(target, { mockUrl, ingressUrl }),
  }));
  const checkAlive = () => {
    for (const [role, started] of services) {
      if (!alive(started))
        throw new Error(`${role} exited during the measurement:\n${logTail(started.logPath)}`);
    }
  };
  const runs: TargetRun[] = [];
  for (const delayMs of params.delays) {
    setDelay(network, delayMs);
    progress(`delay ${delayMs} ms per hop`);
    for (const { target, job } of targets) {
      progress(
        `  ${target}: serial ${params.serial}, c=${params.concurrency} ${params.durationMs} ms, ${params.streams} streams`,
      );
      const before = counters(network, services);
      const result = await loadJob<MeasureResult>(network, job, join(tmp, 'load.log'));
      const after = counters(network, services);
      const requests = result.upstreamCalls;
      runs.push({
        delayMs,
        target,
        result,
        redisCommandsPerRequest: perRequest(before.redis, after.redis, requests),
        packetsPerRequest: perRequest(before.packets, after.packets, requests),
        cpuUsPerRequest: Object.fromEntries(
          Object.entries(perRequest(before.cpu, after.cpu, requests)).map(([role, ms]) => [role, ms * 1000]),
        ),
      });
      checkAlive();
    }
  }
  setDelay(network, 0);
  progress(`round trips: ${COUNTED_REQUESTS} serial requests per target under Redis MONITOR, no delay`);
  const roundTrips: RoundTrips[] = [];
  for (const target of targets) roundTrips.push(await countRoundTrips(network, tmp, target));
  checkAlive();
  return { runs, roundTrips };
}

// ---------------------------------------------------------------------------------------------- main

/** Stops every process of the run and deletes the namespaces; every caller waits for the same clean-up. */
let cleaning: Promise<void> | undefined;
function cleanUp(): Promise<void> {
  cleaning ??= (async () => {
    await stopAll();
    for (const problem of destroyNetwork()) progress(`cleanup: ${problem}`);
  })();
  return cleaning;
}

process.on('exit', () => {
  // Last resort (an exception past main): whatever still runs in the namespaces is killed, they are deleted.
  for (const started of running) if (alive(started)) started.child.kill('SIGKILL');
  destroyNetwork();
});
/** Set by SIGINT or SIGTERM: what fails afterwards is the stop, not the bench. */
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    interrupted = true;
    progress(`${signal}: stopping the processes and deleting the namespaces`);
    void cleanUp().finally(() => process.exit(130));
  });
}

async function main(): Promise<number> {
  const missing = missingPrerequisite();
  if (missing) {
    console.error(`bench:netns cannot run: ${missing}`);
    return 2;
  }
  const date = new Date();
  const prefix = `gwb${process.pid}`;
  const tmp = mkdtempSync(join(tmpdir(), 'gw-bench-netns-'));
  progress(`namespaces ${prefix}-*, temp dir ${tmp}, delays ${params.delays.join(', ')} ms`);
  try {
    const network = createNetwork(prefix);
    if (params.delays.some((delay) => delay > 0)) {
      const error = netemError(network);
      if (error) {
        console.error(
          [
            `bench:netns: tc netem does not work on this kernel, so no delay can be added: ${error}`,
            'The kernel lacks sch_netem (CONFIG_NET_SCH_NETEM; try `modprobe sch_netem`).',
            'Without it, BENCH_NETNS_DELAYS=0 measures the namespaces and veths alone.',
          ].join('\n'),
        );
        return 2;
      }
    }
    const loadBefore = loadavg();
    const { runs, roundTrips } = await run(network, tmp);
    const header = `gw bench:netns ${date.toISOString()} — ${cpus().length} × ${cpus()[0]?.model.trim() ?? '?'}, node ${process.version}`;
    const text = formatReport({ header, params, runs, roundTrips });
    console.log(text);
    const failed =
      runs.some((entry) => entry.result.errors > 0) || roundTrips.some((entry) => entry.errors > 0);
    mkdirSync(RESULTS, { recursive: true });
    const file = join(RESULTS, `netns-${date.toISOString().replace(/:/g, '-')}.json`);
    const output = {
      date: date.toISOString(),
      machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model.trim(), node: process.version },
      loadavgAtStart: loadBefore,
      loadavgAtEnd: loadavg(),
      params,
      ok: !failed,
      runs,
      roundTrips,
      printed: text,
    };
    writeFileSync(file, `${JSON.stringify(output, null, 2)}\n`);
    console.log(`\nresults: ${file}`);
    if (failed) console.log('\nTHIS RUN HAD FAILED REQUESTS (see above); its figures are not clean.');
    return failed ? 1 : 0;
  } finally {
    await cleanUp();
    if (process.env['BENCH_KEEP_TMP']) console.log(`temp dir kept: ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  async (error) => {
    if (!interrupted) console.error(`bench:netns failed: ${(error as Error).stack ?? error}`);
    await cleanUp();
    process.exit(interrupted ? 130 : 2);
  },
);
