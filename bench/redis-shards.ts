// `pnpm bench:shards`: governance's Redis traffic on a Redis Cluster (issue 44). Starts a 3-master Redis Cluster
// (testkit's startRedisCluster), the bench's mock upstream and `node src/cluster.ts` pointed at the Cluster, with
// BENCH_SHARD_KEYS virtual keys spread over teams and customers (each with a budget, the keys with request and
// token limits too, none ever reached; priced, so budgets are charged). Requests take the keys in turn. Phases:
// c=BENCH_CONCURRENCY for BENCH_DURATION_MS after a warm-up, then serial requests after a warm-up; before and after
// each, every master's INFO commandstats, its CPU (/proc) and the ingress's admissions by path. Then the same
// loads again, shorter, while MONITOR on every master names each script call (by its SHA) and each command's
// owner (its hash tag). Prints, per phase and master, commands per request, each master's share and the max/min
// ratio, script calls, admissions on Redis (the request's critical path) and from slices, and writes
// bench/results/shards-latest.json. Everything it started is stopped at the end, on an error, SIGINT or SIGTERM.
// See bench/README.md.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startRedisCluster } from '@gw/testkit';
import { Redis } from 'ioredis';
import { batchedScript } from '../packages/shared/src/store/script-batch.ts';
import { BODY } from './gateway-variants.ts';
import {
  API_KEY,
  admissions,
  baseEnv,
  CHAT_PATH,
  commandCalls,
  delta,
  freePorts,
  HOST,
  intEnv,
  logTail,
  mockStats,
  ROOT,
  type Started,
  scriptCalls,
  sleep,
  start,
  startMock,
  stop,
  stopAtExit,
  waitReady,
} from './harness.ts';
import { type ConcurrentResult, concurrent, type ErrorSample, type SerialResult, serial } from './load.ts';
import { cpuSnapshot, procAvailable } from './process-cpu.ts';
import {
  formatReport,
  type MasterLayout,
  type Monitored,
  OWNER_KINDS,
  type PhaseResult,
} from './redis-shards-report.ts';

const params = {
  masters: intEnv('BENCH_SHARD_MASTERS', 3, 3),
  keys: intEnv('BENCH_SHARD_KEYS', 30, 1),
  teams: intEnv('BENCH_SHARD_TEAMS', 6, 1),
  customers: intEnv('BENCH_SHARD_CUSTOMERS', 3, 1),
  concurrency: intEnv('BENCH_CONCURRENCY', 50, 1),
  durationMs: intEnv('BENCH_DURATION_MS', 8_000, 1),
  warmupMs: intEnv('BENCH_WARMUP_MS', 3_000),
  serial: intEnv('BENCH_SERIAL', 1_000, 1),
  serialWarmup: intEnv('BENCH_WARMUP', 200),
  /** The MONITOR windows: c=BENCH_CONCURRENCY this long, then this many serial requests (0, 0: none). */
  monitorMs: intEnv('BENCH_MONITOR_MS', 3_000),
  monitorSerial: intEnv('BENCH_MONITOR_SERIAL', 300),
  startTimeoutMs: intEnv('BENCH_START_TIMEOUT_MS', 120_000, 1),
};
const RESULTS = join(ROOT, 'bench', 'results');

// ---------------------------------------------------------------------------------------------- owners

interface Owners {
  /** Each key's id, value and team. */
  keys: Array<{ id: string; value: string; team: string }>;
  /** Each team's id and customer. */
  teams: Array<{ id: string; customer: string }>;
  customers: string[];
}

function owners(): Owners {
  const customers = Array.from({ length: params.customers }, (_, index) => `bench-customer-${index}`);
  const teams = Array.from({ length: params.teams }, (_, index) => ({
    id: `bench-team-${index}`,
    customer: customers[index % customers.length]!,
  }));
  const keys = Array.from({ length: params.keys }, (_, index) => ({
    id: `bench-key-${index}`,
    value: `sk-gw-bench-shard-${index}-`.padEnd(46, '0'),
    team: teams[index % teams.length]!.id,
  }));
  return { keys, teams, customers };
}

/** Budgets and limits never reached: counted on every request, refusing none. */
const BUDGET = 'budgets: [{ max_limit: 1000000, reset_duration: 1d }]';
const RATE_LIMIT =
  'rate_limit: { request_max_limit: 1000000000, request_reset_duration: 1m, token_max_limit: 1000000000, token_reset_duration: 1m }';

function gwConfig(path: string, mockUrl: string, { keys, teams, customers }: Owners): void {
  writeFileSync(
    path,
    [
      'providers:',
      `  openai: { keys: [{ value: '${API_KEY}' }], network_config: { base_url: '${mockUrl}' } }`,
      'governance:',
      // USD per million tokens: every request is charged to its key's, team's and customer's budgets.
      "  pricing: { 'gpt-4o-mini': { input: 0.15, output: 0.6 } }",
      '  customers:',
      ...customers.map((id) => `    - { id: ${id}, name: ${id}, ${BUDGET} }`),
      '  teams:',
      ...teams.map(
        (team) => `    - { id: ${team.id}, name: ${team.id}, customer_id: ${team.customer}, ${BUDGET} }`,
      ),
      '  virtual_keys:',
      ...keys.map(
        (key) =>
          `    - { id: ${key.id}, name: ${key.id}, value: '${key.value}', team_id: ${key.team}, ` +
          `provider_configs: [{ provider: openai, allowed_models: ["*"] }], ${BUDGET}, ${RATE_LIMIT} }`,
      ),
      '',
    ].join('\n'),
  );
}

// ---------------------------------------------------------------------------------------------- the masters

interface Master {
  port: number;
  /** The redis-server's pid (INFO server), for its CPU and a kill at exit. */
  pid: number;
  slots: Array<[number, number]>;
  redis: Redis;
}

/** Each master of the Cluster, with its slots (CLUSTER SLOTS) and a connection of its own. */
async function connectMasters(ports: number[]): Promise<Master[]> {
  const masters: Master[] = [];
  for (const port of ports) {
    // No reconnection: a master that is gone (stopped at the end, or died) fails the bench's next call instead.
    const redis = new Redis({
      host: HOST,
      port,
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      retryStrategy: () => null,
    });
    await redis.connect();
    const pid = Number(/^process_id:(\d+)/m.exec(await redis.info('server'))?.[1]);
    masters.push({ port, pid, slots: [], redis });
  }
  const ranges = (await masters[0]!.redis.call('CLUSTER', 'SLOTS')) as Array<
    [number, number, [string, number]]
  >;
  for (const [first, last, [, port]] of ranges)
    masters.find((master) => master.port === port)?.slots.push([first, last]);
  return masters;
}

/** Each master's slots, and how many owners' hash tags and of the journal's 64 (`{res:0}`… `{res:63}`) it holds. */
async function masterLayout(masters: Master[], { keys, teams, customers }: Owners): Promise<MasterLayout[]> {
  const tags: Record<(typeof OWNER_KINDS)[number], string[]> = {
    key: keys.map((key) => `key:${key.id}`),
    team: teams.map((team) => `team:${team.id}`),
    customer: customers.map((id) => `customer:${id}`),
    res: Array.from({ length: 64 }, (_, shard) => `res:${shard}`),
  };
  const layout = masters.map(({ port, slots }) => ({
    port,
    slots,
    owners: { key: 0, team: 0, customer: 0, res: 0 },
  }));
  for (const kind of OWNER_KINDS) {
    for (const name of tags[kind]) {
      const slot = Number(await masters[0]!.redis.call('CLUSTER', 'KEYSLOT', `{${name}}`));
      const holder = layout.find((master) =>
        master.slots.some(([first, last]) => slot >= first && slot <= last),
      );
      holder!.owners[kind]++;
    }
  }
  return layout;
}

/** Commands the bench itself sends (INFO, CLUSTER, MONITOR, ECHO, clients' set-up), left out of every count. */
const BENCH_COMMANDS = /^(info|monitor|echo|cluster\|.*|client\|.*|command\|.*)$/;

interface MasterCounts {
  /** Commands processed, the scripts' inner commands included, the bench's own left out. */
  commands: number;
  /** EVALSHA/EVAL calls: round trips of scripts. */
  scripts: number;
  byCommand: Record<string, number>;
}

async function masterCounts(master: Master): Promise<MasterCounts> {
  const info = await master.redis.info('commandstats');
  const byCommand = Object.fromEntries(
    Object.entries(commandCalls(info)).filter(([name]) => !BENCH_COMMANDS.test(name)),
  );
  return {
    commands: Object.values(byCommand).reduce((sum, calls) => sum + calls, 0),
    scripts: scriptCalls(info),
    byCommand,
  };
}

// ---------------------------------------------------------------------------------------------- MONITOR

/** The admission scripts by the SHA1 of what RedisStore loads (each file of lua/ in its batched form). */
const SCRIPT_NAMES = (() => {
  const dir = join(ROOT, 'packages', 'shared', 'src', 'store', 'lua');
  const names = new Map<string, string>();
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.lua'))) {
    const sha = createHash('sha1')
      .update(batchedScript(readFileSync(join(dir, file), 'utf8')))
      .digest('hex');
    names.set(sha, file.replace(/\.lua$/, ''));
  }
  return names;
})();

const OWNER_TAG = /\{([a-z_]+):/;

/**
 * The ARGV of each call a batched admission script carries (script-batch.ts): after its KEYS, the number of calls,
 * then per call its key count, its argument count and its arguments.
 */
function batchCalls(args: string[]): string[][] {
  let at = 3 + Number(args[2]);
  const count = Number(args[at++]);
  const calls: string[][] = [];
  for (let call = 0; call < count; call++) {
    const argCount = Number(args[at + 1]);
    calls.push(args.slice(at + 2, at + 2 + argCount));
    at += 2 + argCount;
  }
  return calls;
}

/** Counts MONITOR's lines of one master; a script's inner commands (they follow its call) count as its own. */
function monitorCounter() {
  const seen: Monitored = { scripts: {}, commands: {}, owners: {} };
  let current: { script: string; owner: string } | undefined;
  const count = (args: string[], source: string) => {
    const name = (args[0] ?? '').toLowerCase();
    if (BENCH_COMMANDS.test(name)) return;
    if (source === 'lua' && current) {
      seen.owners[current.owner] = (seen.owners[current.owner] ?? 0) + 1;
      seen.scripts[current.script]!.inner++;
      return;
    }
    const script = name === 'evalsha' || name === 'eval';
    const key = script ? args[3] : args[1];
    const owner = (key !== undefined && OWNER_TAG.exec(key)?.[1]) || 'none';
    seen.owners[owner] = (seen.owners[owner] ?? 0) + 1;
    if (!script) {
      seen.commands[name] = (seen.commands[name] ?? 0) + 1;
      return;
    }
    const sha = name === 'eval' ? createHash('sha1').update(args[1]!).digest('hex') : args[1]!;
    const known = SCRIPT_NAMES.get(sha);
    const scriptName = known ?? `other script ${sha.slice(0, 8)}`;
    seen.scripts[scriptName] ??= { roundTrips: 0, calls: 0, inner: 0, reports: 0 };
    const entry = seen.scripts[scriptName];
    entry.roundTrips++;
    if (!known) entry.calls++;
    else {
      const calls = batchCalls(args);
      entry.calls += calls.length;
      // take-slice-2's ARGV: holder, want, limit, used, step…: nothing wanted and no step is a report of spend.
      if (known === 'take-slice-2')
        entry.reports += calls.filter((call) => call[1] === '0' && call[4] === '0').length;
    }
    current = { script: scriptName, owner };
  };
  return { seen, count };
}

/** MONITOR on every master until the returned function is called; what each saw. */
async function monitorMasters(masters: Master[]): Promise<() => Promise<Monitored[]>> {
  const watching = await Promise.all(
    masters.map(async (master) => {
      const counter = monitorCounter();
      const monitor = await master.redis.monitor();
      const marker = `bench-shards-${process.pid}-${master.port}`;
      let flushed: ((error?: Error) => void) | undefined;
      let failure: Error | undefined;
      // ioredis reports lines that come while the connection closes, after the window, as errors: none is lost.
      monitor.on('error', (error: Error) => {
        failure ??= error;
      });
      monitor.on('end', () =>
        flushed?.(
          new Error(`MONITOR on :${master.port} ended in its window: ${failure?.message ?? 'closed'}`),
        ),
      );
      monitor.on('monitor', (_time: string, args: string[], source: string) => {
        if (args[0]?.toLowerCase() === 'echo' && args[1] === marker) flushed?.();
        else counter.count(args, source);
      });
      /** Resolves once MONITOR shows an ECHO sent now: it has shown every command before it too. */
      const flush = async () => {
        const seen = new Promise<void>((resolve, reject) => {
          flushed = (error) => (error ? reject(error) : resolve());
        });
        await master.redis.echo(marker);
        try {
          await seen;
        } finally {
          flushed = undefined;
          monitor.disconnect();
        }
      };
      return { seen: counter.seen, flush };
    }),
  );
  return async () => {
    await Promise.all(watching.map(({ flush }) => flush()));
    return watching.map(({ seen }) => seen);
  };
}

// ---------------------------------------------------------------------------------------------- phases

interface Gateway {
  base: string;
  mockUrl: string;
  rotate: Array<Record<string, string>>;
}

type Load = (
  url: string,
  options: { rotate: Array<Record<string, string>>; phase: string },
) => Promise<ConcurrentResult | SerialResult>;

/**
 * Until every key is served: the ingress follows the store's changes, so keys seeded after it started may come a
 * moment later than the first.
 */
async function waitForKeys(
  url: string,
  rotate: Array<Record<string, string>>,
  timeoutMs: number,
): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (const headers of rotate) {
    for (;;) {
      const answer = await serial(url, BODY, 1, { headers, phase: 'keys ready' });
      if (answer.errors === 0) break;
      if (performance.now() > deadline)
        throw new Error(`a key is not served in time: ${JSON.stringify(answer.errorSamples[0])}`);
      await sleep(100);
    }
  }
}

/**
 * When the ingress admitted on Redis while `done` runs: its exact admissions read every half second, as
 * [seconds into the phase, seconds past the wall clock's minute, admissions since the reading before] where there
 * were any. The keys' 1-minute rate limits start a period at every minute (:00): a burst just after it is their
 * slices taken anew; a burst elsewhere, a slice call that waited past 250 ms (admission then goes to Redis).
 */
async function exactTimeline(
  base: string,
  done: Promise<unknown>,
  from: number,
): Promise<Array<[number, number, number]>> {
  const begun = performance.now();
  const settled = done.then(
    () => true,
    () => true,
  );
  const timeline: Array<[number, number, number]> = [];
  let last = from;
  let finished = false;
  while (!finished) {
    finished = await Promise.race([sleep(500).then(() => false), settled]);
    const { exact } = await admissions(base);
    const tenths = (ms: number) => Math.round(ms / 100) / 10;
    if (exact > last)
      timeline.push([tenths(performance.now() - begun), tenths(Date.now() % 60_000), exact - last]);
    last = exact;
  }
  return timeline;
}

async function measurePhase(
  name: string,
  load: Load,
  context: { gateway: Gateway; masters: Master[]; monitor: boolean },
): Promise<PhaseResult> {
  const { gateway, masters } = context;
  const groups = masters.map((master) => ({ name: String(master.port), pids: [master.pid] }));
  const snapshot = async () => ({
    masters: await Promise.all(masters.map(masterCounts)),
    admissions: await admissions(gateway.base),
    mock: await mockStats(gateway.mockUrl),
    cpu: procAvailable ? cpuSnapshot(groups) : undefined,
  });
  const before = await snapshot();
  const stopMonitor = context.monitor ? await monitorMasters(masters) : undefined;
  const begun = performance.now();
  const loading = load(gateway.base + CHAT_PATH, { rotate: gateway.rotate, phase: name });
  const [result, exactAt] = await Promise.all([
    loading,
    exactTimeline(gateway.base, loading, before.admissions.exact),
  ]);
  const elapsedMs = performance.now() - begun;
  const monitor = await stopMonitor?.();
  const after = await snapshot();
  const requests = delta(before.mock, after.mock).requests;
  return {
    name,
    monitored: context.monitor,
    requests,
    rps: (requests * 1000) / elapsedMs,
    errors: result.errors,
    errorSamples: result.errorSamples,
    admissions: {
      local: after.admissions.local - before.admissions.local,
      exact: after.admissions.exact - before.admissions.exact,
    },
    exactAt,
    masters: masters.map((master, index) => {
      const cpuBefore = before.cpu?.get(String(master.port));
      const cpuAfter = after.cpu?.get(String(master.port));
      const [from, to] = [before.masters[index]!, after.masters[index]!];
      return {
        port: master.port,
        commands: to.commands - from.commands,
        scripts: to.scripts - from.scripts,
        byCommand: Object.fromEntries(
          Object.entries(to.byCommand)
            .map(([name, calls]) => [name, calls - (from.byCommand[name] ?? 0)] as const)
            .filter(([, calls]) => calls > 0),
        ),
        cpuMs: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore,
      };
    }),
    ...(monitor && { monitor }),
  };
}

const concurrentLoad =
  (durationMs: number): Load =>
  (url, options) =>
    concurrent(url, BODY, { concurrency: params.concurrency, durationMs }, options);
const serialLoad =
  (count: number): Load =>
  (url, options) =>
    serial(url, BODY, count, options);

// ---------------------------------------------------------------------------------------------- main

async function main(): Promise<number> {
  const date = new Date();
  const tmp = mkdtempSync(join(tmpdir(), 'gw-bench-shards-'));
  const progress = (text: string) => process.stderr.write(`[shards] ${text}\n`);
  let topology: Awaited<ReturnType<typeof startRedisCluster>> | undefined;
  let mock: Started | undefined;
  let gw: Started | undefined;
  let masters: Master[] = [];
  let forget: () => void = () => {};
  try {
    progress(`starting a ${params.masters}-master Redis Cluster and the mock`);
    topology = await startRedisCluster(params.masters);
    masters = await connectMasters(topology.ports);
    const cluster = topology;
    forget = stopAtExit({
      kill: () => {
        for (const master of masters) {
          try {
            process.kill(master.pid, 'SIGKILL');
          } catch {}
        }
      },
      stop: () => {
        for (const master of masters) master.redis.disconnect();
        return cluster.stop();
      },
    });
    const started = await startMock(tmp, 5);
    mock = started.mock;
    const mockUrl = started.url;
    const gwOwners = owners();
    const configPath = join(tmp, 'gateway.yaml');
    gwConfig(configPath, mockUrl, gwOwners);
    const [ingress, admin, router, governance] = (await freePorts(4)) as [number, number, number, number];
    const logPath = join(tmp, 'gw.log');
    gw = start(
      'gw cluster',
      'src/cluster.ts',
      {
        ...baseEnv(),
        REDIS_URL: topology.url,
        PORT: String(ingress),
        GW_ADMIN_PORT: String(admin),
        GW_ROUTER_PORT: String(router),
        GW_GOVERNANCE_PORT: String(governance),
        ...Object.fromEntries(
          ['GOVERNANCE', 'ROUTER', 'MCP_RUNNER', 'INGRESS', 'ADMIN'].map((name) => [
            `GW_${name}_REPLICAS`,
            '1',
          ]),
        ),
        GW_GOVERNANCE_ADMISSION: 'local',
        GATEWAY_DATA_DIR: mkdtempSync(join(tmp, 'data-')),
        GATEWAY_CONFIG: configPath,
      },
      logPath,
      { group: true },
    );
    const base = `http://${HOST}:${ingress}`;
    const rotate = gwOwners.keys.map((key) => ({ 'x-gw-vk': key.value }));
    progress(`gw cluster started (pid ${gw.child.pid}) on ${topology.url}, waiting for ${base}`);
    const startup = await waitReady(
      gw,
      base,
      { readyPath: '/health', body: BODY, headers: rotate[0]! },
      params.startTimeoutMs,
    );
    await waitForKeys(base + CHAT_PATH, rotate, params.startTimeoutMs);
    const layout = await masterLayout(masters, gwOwners);
    const gateway: Gateway = { base, mockUrl, rotate };
    const context = { gateway, masters, monitor: false };
    const warmups: ErrorSample[] = [];
    let warmupErrors = 0;
    const warm = async (load: Load, phase: string) => {
      const result = await load(base + CHAT_PATH, { rotate, phase });
      warmupErrors += result.errors;
      warmups.push(...result.errorSamples);
    };

    const phases: PhaseResult[] = [];
    progress(`c=${params.concurrency}: warm-up ${params.warmupMs} ms, then ${params.durationMs} ms`);
    await warm(concurrentLoad(params.warmupMs), `c=${params.concurrency} warm-up`);
    phases.push(await measurePhase(`c=${params.concurrency}`, concurrentLoad(params.durationMs), context));
    if (params.monitorMs > 0) {
      progress(`c=${params.concurrency} under MONITOR: ${params.monitorMs} ms`);
      phases.push(
        await measurePhase(`c=${params.concurrency} MONITOR`, concurrentLoad(params.monitorMs), {
          ...context,
          monitor: true,
        }),
      );
    }
    progress(`serial: warm-up ${params.serialWarmup}, then ${params.serial} requests`);
    await warm(serialLoad(params.serialWarmup), 'serial warm-up');
    phases.push(await measurePhase('c=1', serialLoad(params.serial), context));
    if (params.monitorSerial > 0) {
      progress(`serial under MONITOR: ${params.monitorSerial} requests`);
      phases.push(
        await measurePhase('c=1 MONITOR', serialLoad(params.monitorSerial), { ...context, monitor: true }),
      );
    }
    if (gw.child.exitCode !== null || gw.child.signalCode !== null)
      throw new Error(`gw exited during the measurement:\n${logTail(logPath)}`);

    const header =
      `gw on a ${masters.length}-master Redis Cluster: ${params.keys} keys over ${params.teams} teams and ` +
      `${params.customers} customers (a budget each, the keys a request and a token limit), 1 ingress; ` +
      `${cpus().length} CPUs, load average ${loadavg()
        .map((load) => load.toFixed(1))
        .join(' ')}`;
    const text = formatReport(header, phases, layout);
    console.log(`\n${text}`);
    const errors = warmupErrors + phases.reduce((sum, phase) => sum + phase.errors, 0);
    const output = {
      date: date.toISOString(),
      machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model.trim(), node: process.version },
      loadavgAtEnd: loadavg(),
      params,
      ok: errors === 0,
      startup,
      masters: layout,
      warmup: { errors: warmupErrors, errorSamples: warmups.slice(0, 10) },
      phases,
      printed: text,
    };
    mkdirSync(RESULTS, { recursive: true });
    const json = `${JSON.stringify(output, null, 2)}\n`;
    const file = join(RESULTS, `shards-${date.toISOString().replace(/:/g, '-')}.json`);
    writeFileSync(file, json);
    writeFileSync(join(RESULTS, 'shards-latest.json'), json);
    console.log(`\nresults: ${file}\n         ${join(RESULTS, 'shards-latest.json')}`);
    if (errors > 0) {
      console.log(
        `\n${errors} REQUESTS FAILED; the figures are not clean. E.g. ${JSON.stringify(warmups[0] ?? phases.find((phase) => phase.errors > 0)?.errorSamples[0])}`,
      );
      return 1;
    }
    return 0;
  } finally {
    if (gw) {
      progress('stopping gw (SIGTERM)');
      await stop(gw);
    }
    if (mock) await stop(mock, 5_000);
    for (const master of masters) master.redis.disconnect();
    if (topology) {
      progress('stopping the Redis Cluster');
      await topology.stop();
      forget();
    }
    if (process.env['BENCH_KEEP_TMP']) console.log(`temp dir kept: ${tmp}`);
    else rmSync(tmp, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error) => {
    console.error(`bench:shards failed: ${(error as Error).stack ?? error}`);
    process.exit(2);
  },
);
