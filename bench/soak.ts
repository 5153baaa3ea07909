// `pnpm bench:soak`: a gateway's memory under a long load, and after it. Starts the bench's mock and a gateway
// (SOAK_MODE: `cluster`, `node src/cluster.ts` with one replica of each service and a fresh Redis key prefix, or
// `embedded`), sends governed requests (the bench's virtual key) at c=BENCH_CONCURRENCY (50) for SOAK_DURATION_MS
// (5 min) in slices of SOAK_SLICE_MS (30 s), then idles SOAK_IDLE_MS (30 s). Every SOAK_SAMPLE_MS (2 s) it reads the
// ingress's /metrics; after each slice, every process's RSS (/proc/<pid>/status). A heap that keeps growing is a
// leak: its lowest `heap used` and `old used` of a slice (right after a collection) climb slice after slice. A heap
// that levels off while RSS grows is V8 filling the room it was given (docs/operations.md "Memory").
// SOAK_VARIANTS: gateways to soak side by side, on the same machine at the same time, separated by `;`; each is
// words, `NAME=value` ones set in its environment, the others node flags (NODE_OPTIONS, which the cluster's
// launcher passes on), e.g. `SOAK_VARIANTS='--max-old-space-size=0 --max-semi-space-size=0;'`: V8's own heap
// sizing beside the launcher's (default: one gateway as it ships).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, waitFor } from '@gw/testkit';
import { Redis } from 'ioredis';
import { BODY, listening, VIRTUAL_KEY, VIRTUAL_KEY_CONFIG } from './gateway-variants.ts';
import { concurrent } from './load.ts';
import {
  clusterProcesses,
  cpuPerRequest,
  cpuSnapshot,
  type ProcessGroup,
  processTree,
} from './process-cpu.ts';

const MODE = process.env['SOAK_MODE'] ?? 'cluster';
if (MODE !== 'cluster' && MODE !== 'embedded')
  throw new Error(`SOAK_MODE: cluster or embedded, not '${MODE}'`);
const DURATION_MS = Number(process.env['SOAK_DURATION_MS'] ?? 300_000);
const SLICE_MS = Number(process.env['SOAK_SLICE_MS'] ?? 30_000);
const IDLE_MS = Number(process.env['SOAK_IDLE_MS'] ?? 30_000);
const SAMPLE_MS = Number(process.env['SOAK_SAMPLE_MS'] ?? 2_000);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 50);
const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const VARIANTS = (process.env['SOAK_VARIANTS'] ?? '').split(';').map((variant) => variant.trim());
const MB = 1024 * 1024;

/** The ingress's memory in its /metrics (prom-client's default metrics, `gw_` prefixed). */
const METRICS = {
  heapUsed: /^gw_nodejs_heap_size_used_bytes\{[^}]*\} (\S+)/m,
  heapTotal: /^gw_nodejs_heap_size_total_bytes\{[^}]*\} (\S+)/m,
  oldUsed: /^gw_nodejs_heap_space_size_used_bytes\{[^}]*space="old"[^}]*\} (\S+)/m,
  newTotal: /^gw_nodejs_heap_space_size_total_bytes\{[^}]*space="new"[^}]*\} (\S+)/m,
  external: /^gw_nodejs_external_memory_bytes\{[^}]*\} (\S+)/m,
  rss: /^gw_process_resident_memory_bytes\{[^}]*\} (\S+)/m,
};
type Memory = Record<keyof typeof METRICS, number>;

/** One row of a variant's table: the slice's load, each process group's RSS, the ingress's memory (MB). */
interface Sample {
  at: string;
  rps: number | undefined;
  errors: number;
  /** CPU µs a request of the ingress in the slice (the embedded gateway's, in embedded mode). */
  cpu: number | undefined;
  rss: Record<string, number>;
  /** The lowest heap used and old space used of the slice's readings: what a collection left. */
  heapUsedLow: number;
  oldUsedLow: number;
  /** The last reading of the slice. */
  last: Memory;
}

const rssMb = (pids: number[]) => {
  let kb = 0;
  for (const pid of pids) {
    try {
      kb += Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
    } catch {}
  }
  return kb / 1024;
};

async function memory(base: string): Promise<Memory> {
  const text = await (await fetch(`${base}/metrics`)).text();
  const entries = Object.entries(METRICS).map(([name, pattern]) => {
    const value = pattern.exec(text)?.[1];
    if (value === undefined) throw new Error(`${base}/metrics has no ${pattern.source}`);
    return [name, Number(value) / MB];
  });
  return Object.fromEntries(entries) as Memory;
}

/** Reads the ingress's memory every SAMPLE_MS until `done` settles; the readings, the last one after it. */
async function readings<T>(base: string, done: Promise<T>): Promise<{ result: T; read: Memory[] }> {
  const read: Memory[] = [];
  let settled = false;
  const finished = done.finally(() => {
    settled = true;
  });
  while (!settled) {
    read.push(await memory(base));
    await Promise.race([sleep(SAMPLE_MS), finished]);
  }
  read.push(await memory(base));
  return { result: await finished, read };
}

/** The parent environment without variables that would point gw at something else than this run's. */
function gwEnv(variant: string): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env)) {
    if (name.startsWith('GW_') || name.startsWith('GATEWAY_') || name === 'REDIS_URL' || name === 'PORT')
      delete env[name];
  }
  const words = variant.split(/\s+/).filter(Boolean);
  const settings = words.filter((word) => /^[A-Z_]+=/.test(word)).map((word) => word.split('=', 2));
  const flags = words.filter((word) => !/^[A-Z_]+=/.test(word));
  return {
    ...env,
    ...Object.fromEntries(settings),
    GW_HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    NODE_OPTIONS: [env['NODE_OPTIONS'], ...flags].filter(Boolean).join(' '),
  };
}

function config(dir: string, mockUrl: string): string {
  const path = join(dir, 'gateway.yaml');
  writeFileSync(
    path,
    [
      'providers:',
      `  openai: { keys: [{ value: 'sk-bench' }], network_config: { base_url: '${mockUrl}' } }`,
      // pnpm bench's virtual key: its budget and limits are counted on every request.
      ...VIRTUAL_KEY_CONFIG,
      '',
    ].join('\n'),
  );
  return path;
}

/** Starts one variant's gateway and soaks it; its samples. */
async function soak(variant: string, index: number, mockUrl: string, tmp: string): Promise<Sample[]> {
  const label = variant || 'default';
  const dir = mkdtempSync(join(tmp, `${index}-`));
  const redisPrefix = `gw-bench:${process.pid}:${Date.now()}:${index}:`;
  const port = await freePort();
  const env = {
    ...gwEnv(variant),
    PORT: String(port),
    GATEWAY_CONFIG: config(dir, mockUrl),
    GATEWAY_DATA_DIR: dir,
  };
  const gateway: ChildProcess =
    MODE === 'embedded'
      ? spawn(process.execPath, ['src/embedded.ts'], { env, stdio: 'inherit', detached: true })
      : spawn(process.execPath, ['src/cluster.ts'], {
          env: {
            ...env,
            REDIS_URL,
            GW_REDIS_PREFIX: redisPrefix,
            GW_ADMIN_PORT: String(await freePort()),
            GW_ROUTER_PORT: String(await freePort()),
            GW_GOVERNANCE_PORT: String(await freePort()),
            ...Object.fromEntries(
              ['GOVERNANCE', 'ROUTER', 'MCP_RUNNER', 'INGRESS', 'ADMIN'].map((name) => [
                `GW_${name}_REPLICAS`,
                '1',
              ]),
            ),
          },
          stdio: 'inherit',
          detached: true,
        });
  const samples: Sample[] = [];
  try {
    const base = `http://127.0.0.1:${port}`;
    const url = `${base}/v1/chat/completions`;
    const headers = { 'x-gw-vk': VIRTUAL_KEY };
    await waitFor(
      async () =>
        (
          await fetch(url, {
            method: 'POST',
            headers: { ...headers, 'content-type': 'application/json' },
            body: BODY,
          })
        ).status === 200,
      { timeoutMs: 180_000, intervalMs: 500, what: `a governed answer from ${url}` },
    );
    const launcher = gateway.pid!;
    const groups = (): ProcessGroup[] =>
      MODE === 'embedded' ? [{ name: 'embedded', pids: processTree(launcher) }] : clusterProcesses(launcher);
    const ingress = MODE === 'embedded' ? 'embedded' : 'ingress';
    const sample = (
      at: string,
      read: Memory[],
      load?: { rps: number; errors: number; cpu: number | undefined },
    ) => {
      const row: Sample = {
        at,
        rps: load?.rps,
        errors: load?.errors ?? 0,
        cpu: load?.cpu,
        rss: Object.fromEntries(groups().map((group) => [group.name, rssMb(group.pids)])),
        heapUsedLow: Math.min(...read.map((reading) => reading.heapUsed)),
        oldUsedLow: Math.min(...read.map((reading) => reading.oldUsed)),
        last: read.at(-1)!,
      };
      samples.push(row);
      console.log(
        `[soak ${label}] ${at}: ${load ? `${Math.round(load.rps)} req/s, ${load.errors} errors, ` : ''}` +
          `ingress heap used ≥ ${row.heapUsedLow.toFixed(0)} MB of ${row.last.heapTotal.toFixed(0)}, RSS ` +
          Object.entries(row.rss)
            .map(([name, mb]) => `${name} ${mb.toFixed(0)}`)
            .join(', '),
      );
    };
    sample('start', [await memory(base)]);
    const started = Date.now();
    while (Date.now() - started < DURATION_MS) {
      const slice = Math.min(SLICE_MS, DURATION_MS - (Date.now() - started));
      const cpuBefore = cpuSnapshot(groups());
      const { result, read } = await readings(
        base,
        concurrent(url, BODY, { concurrency: CONCURRENCY, durationMs: slice }, { headers, phase: 'soak' }),
      );
      const cpu = cpuPerRequest(cpuBefore, cpuSnapshot(groups()), result.ok)[ingress];
      if (result.errors > 0) console.log(`[soak ${label}] e.g. ${JSON.stringify(result.errorSamples[0])}`);
      sample(`${Math.round((Date.now() - started) / 1000)} s`, read, { ...result, cpu });
    }
    const { read } = await readings(base, sleep(IDLE_MS));
    sample(`idle ${Math.round(IDLE_MS / 1000)} s`, read);
  } finally {
    if (gateway.exitCode === null) {
      const exited = new Promise((resolve) => gateway.once('exit', resolve));
      process.kill(-gateway.pid!, 'SIGTERM');
      await exited;
    }
    if (MODE === 'cluster') await deleteKeys(redisPrefix);
  }
  return samples;
}

async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL);
  let deleted = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) deleted += await redis.del(...keys);
  } while (cursor !== '0');
  await redis.quit();
  console.log(`[soak] redis: deleted ${deleted} keys of ${prefix}*`);
}

function table(variant: string, samples: Sample[]): string {
  const names = Object.keys(samples[0]?.rss ?? {});
  const columns = [
    'at',
    'req/s',
    'errors',
    `${MODE === 'embedded' ? 'embedded' : 'ingress'} µs/req`,
    ...names.map((name) => `${name} RSS`),
    'heap used ≥',
    'old used ≥',
    'heap total',
    'new space',
    'external',
  ];
  const cell = (value: number | undefined) => (value === undefined ? '—' : value.toFixed(0));
  const widths = columns.map((column, index) => (index === 0 ? 10 : Math.max(8, column.length + 2)));
  const line = (cells: string[]) =>
    cells
      .map((text, index) => (index === 0 ? text.padEnd(widths[0]!) : text.padStart(widths[index]!)))
      .join('');
  return [
    `${MODE}${variant ? ` ${variant}` : ''}: c=${CONCURRENCY} governed for ${DURATION_MS / 1000} s, then ` +
      `${IDLE_MS / 1000} s idle; MB (RSS from /proc, the rest the ingress's /metrics; ≥: the slice's lowest reading)`,
    line(columns),
    ...samples.map((row) =>
      line([
        row.at,
        cell(row.rps),
        String(row.errors),
        cell(row.cpu),
        ...names.map((name) => cell(row.rss[name])),
        cell(row.heapUsedLow),
        cell(row.oldUsedLow),
        cell(row.last.heapTotal),
        cell(row.last.newTotal),
        cell(row.last.external),
      ]),
    ),
  ].join('\n');
}

const tmp = mkdtempSync(join(tmpdir(), 'gw-soak-'));
const mock = spawn(process.execPath, ['bench/mock-upstream.ts', '0'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
try {
  const mockUrl = `http://127.0.0.1:${await listening(mock)}`;
  // Settled, not all: a variant that fails still lets the others finish and stop their gateways.
  const results = await Promise.allSettled(
    VARIANTS.map((variant, index) => soak(variant, index, mockUrl, tmp)),
  );
  for (const result of results) if (result.status === 'rejected') throw result.reason;
  const tables = results.map((result, index) =>
    table(VARIANTS[index]!, (result as PromiseFulfilledResult<Sample[]>).value),
  );
  console.log(`\n${tables.join('\n\n')}`);
} finally {
  mock.kill('SIGTERM');
  rmSync(tmp, { recursive: true, force: true });
}
