// `pnpm bench:threads`: CPU a request by thread of an embedded gateway under load, per config variant, measured in
// short turns so that the machine's drifting load falls on every variant alike. One embedded gateway per variant
// (and build) is started, all at once; each gets BENCH_TH_WARMUP requests (20,000) at c=BENCH_CONCURRENCY (50).
// Then BENCH_TH_ROUNDS rounds (30): in each, every gateway in turn (the order rotated from round to round) serves
// BENCH_TH_REQUESTS requests (2,000, about a second), while the others idle. The CPU time of each gateway's threads
// is read between rounds (the scheduler's nanoseconds, /proc/<pid>/task/*/schedstat; Linux only), so a round's
// figure holds what its requests left for later (a request-log batch, a span export) as well as what they did at
// once. Each round prints the main thread's µs a request of each gateway; then, per variant, the medians over
// rounds (min..max) of requests a second, of the main thread (the event loop) and of all threads (node's worker
// threads: the request-log SQLite thread, the span-export thread; V8's compiler and GC threads; libuv's pool), and
// each one's difference from `off` of the same build: the median over rounds of (variant ÷ off of that round − 1),
// (min..max), and whether that median for all threads is within issue 43's 5 %. A round's figure moves by ±15 %
// on this machine (a collection, a stolen slice), so the medians need tens of rounds. Variants (BENCH_TH_VARIANTS,
// comma-separated, those of gateway-variants.ts: off, logs, trace0, trace0.01, trace1, guardrails, cache, rules,
// vk, floor); BENCH_BASELINE: a checkout whose gateways run beside these, `<variant>@base`.
// Where bench:instructions counts a capability's instructions, this reads what it costs a loaded gateway.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { listening, questions, startGateway, variantNames } from './gateway-variants.ts';
import { concurrent } from './load.ts';

/** At least 10,000: the `cache` variant's scope is full (each store evicts the oldest) before anything is read. */
const WARMUP = Number(process.env['BENCH_TH_WARMUP'] ?? 20_000);
const REQUESTS = Number(process.env['BENCH_TH_REQUESTS'] ?? 2_000);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 50);
const ROUNDS = Number(process.env['BENCH_TH_ROUNDS'] ?? 30);
const names = variantNames('BENCH_TH_VARIANTS', 'off,logs,trace0,trace0.01');
const builds = [
  ...(process.env['BENCH_BASELINE']
    ? [{ label: '@base', root: resolve(process.env['BENCH_BASELINE']) }]
    : []),
  { label: '', root: resolve('.') },
];
/** Issue 43's bound: a feature on costs at most this much more CPU a request than `off`. */
const BOUND = 0.05;

/**
 * CPU nanoseconds so far of a process's threads, summed by thread name: the scheduler's own count
 * (/proc/<pid>/task/<tid>/schedstat), exact where /proc's stat counts 10 ms ticks, too coarse for a turn of a
 * second.
 */
function threadNanos(pid: number): Map<string, number> {
  const nanos = new Map<string, number>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8').trim();
      const onCpu = Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, 'utf8').split(' ')[0]);
      nanos.set(name, (nanos.get(name) ?? 0) + onCpu);
    } catch {
      // A thread that ended between the listing and the reading: what it ran is lost, as /proc forgets it.
    }
  }
  return nanos;
}

/** One gateway's round: requests a second of its turn, and CPU µs a request by thread. */
interface Measured {
  rps: number;
  main: number;
  workers: number;
  v8: number;
  /** Every thread of the process, those above and the rest (libuv's pool). */
  all: number;
}

interface Running {
  /** The variant, and `@base` for BENCH_BASELINE's. */
  key: string;
  /** `off` of the same build, whose round a difference is taken against. */
  off: string;
  gateway: ChildProcess;
  url: string;
  headers: Record<string, string>;
  body: () => Buffer;
  rounds: Measured[];
}

/** A round's figures from the CPU times at its start and at its end and the requests its turn served. */
function measure(before: Map<string, number>, after: Map<string, number>, served: number, rps: number) {
  const perRequest = (match: (thread: string) => boolean) => {
    let nanos = 0;
    for (const [thread, count] of after) if (match(thread)) nanos += count - (before.get(thread) ?? 0);
    return nanos / 1000 / served;
  };
  return {
    rps,
    main: perRequest((thread) => thread === 'MainThread'),
    workers: perRequest((thread) => thread === 'WorkerThread'),
    v8: perRequest((thread) => thread.startsWith('V8')),
    all: perRequest(() => true),
  };
}

const tmp = mkdtempSync(join(tmpdir(), 'gw-bench-threads-'));
const mock = spawn(process.execPath, ['bench/mock-upstream.ts', '0'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const mockUrl = `http://127.0.0.1:${await listening(mock)}`;
const running: Running[] = [];
try {
  for (const name of names) {
    for (const build of builds) {
      const dir = join(tmp, String(running.length));
      const started = await startGateway({ root: build.root, dir, mockUrl, variant: name });
      running.push({
        ...started,
        key: `${name}${build.label}`,
        off: `off${build.label}`,
        body: questions(),
        rounds: [],
      });
    }
  }
  const load = async (each: Running, total: number) => {
    const measured = await concurrent(
      each.url,
      each.body,
      { concurrency: CONCURRENCY, total },
      { headers: each.headers },
    );
    if (measured.errors > 0)
      throw new Error(
        `${each.key}: ${measured.errors} requests failed (${JSON.stringify(measured.errorSamples[0])})`,
      );
    return measured;
  };
  for (const each of running) await load(each, WARMUP);
  console.log(`[threads] ${running.length} gateways up and warmed (${WARMUP} requests each)`);
  let times = running.map((each) => threadNanos(each.gateway.pid!));
  for (let round = 0; round < ROUNDS; round++) {
    const turns: Array<{ ok: number; rps: number }> = [];
    for (let turn = 0; turn < running.length; turn++) {
      const index = (round + turn) % running.length;
      const { ok, rps } = await load(running[index]!, REQUESTS);
      turns[index] = { ok, rps };
    }
    // What the last turn's requests left for later (a log batch written each second) runs before the reading.
    if (round === ROUNDS - 1) await sleep(1500);
    const now = running.map((each) => threadNanos(each.gateway.pid!));
    for (const [index, each] of running.entries())
      each.rounds.push(measure(times[index]!, now[index]!, turns[index]!.ok, turns[index]!.rps));
    times = now;
    console.log(
      `[threads] round ${round + 1}, main µs a request: ` +
        running.map((each) => `${each.key} ${Math.round(each.rounds[round]!.main)}`).join(', '),
    );
  }
} finally {
  for (const each of running) each.gateway.kill('SIGTERM');
  await Promise.all(
    running.map((each) =>
      each.gateway.exitCode === null ? new Promise((done) => each.gateway.once('exit', done)) : undefined,
    ),
  );
  mock.kill('SIGTERM');
  rmSync(tmp, { recursive: true, force: true });
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const micros = (value: number) => value.toFixed(1);
const percent = (ratio: number) => `${ratio >= 0 ? '+' : ''}${(ratio * 100).toFixed(1)}`;
/** A figure's median over rounds and its spread: `52.1 (51.0..53.2)`. */
const spread = (values: number[], format: (value: number) => string, unit = '') =>
  `${format(median(values))}${unit} (${format(Math.min(...values))}..${format(Math.max(...values))})`;
/** A table's line: the variant left-aligned, every other cell right-aligned to its column's width. */
const line = (cells: string[]) =>
  cells
    .map((cell, index) => (index === 0 ? cell.padEnd(16) : cell.padStart([7, 19, 21, 19, 21, 6][index - 1]!)))
    .join(' ');

console.log(
  `\nCPU µs a request: ${ROUNDS} rounds of ${REQUESTS} requests at c=${CONCURRENCY} to each gateway in turn, after ${WARMUP};` +
    ' median (min..max) over rounds; vs off: variant ÷ off of the same round − 1',
);
console.log(line(['variant', 'req/s', 'main µs', 'main vs off', 'all threads µs', 'all vs off', '≤ 5 %']));
for (const { key, off: offKey, rounds: rows } of running) {
  // The same build's `off`, round by round: a difference is taken within a round, where the drift is one.
  const off = running.find((each) => each.key === offKey)?.rounds;
  const versus = (figure: (row: Measured) => number) =>
    off && off !== rows ? rows.map((row, round) => figure(row) / figure(off[round]!) - 1) : undefined;
  const main = versus((row) => row.main);
  const all = versus((row) => row.all);
  console.log(
    line([
      key,
      String(Math.round(median(rows.map((row) => row.rps)))),
      spread(
        rows.map((row) => row.main),
        micros,
      ),
      main ? spread(main, percent, '%') : '',
      spread(
        rows.map((row) => row.all),
        micros,
      ),
      all ? spread(all, percent, '%') : '',
      all ? (median(all) <= BOUND ? 'yes' : 'no') : '',
    ]).trimEnd(),
  );
}
