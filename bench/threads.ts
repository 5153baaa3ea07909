// `pnpm bench:threads`: CPU a request by thread of an embedded gateway under load, per config variant, the
// variants (and builds) run in turns so that the machine's drifting load falls on all of them alike. Each run
// is its own gateway: BENCH_TH_WARMUP requests (40,000) at c=BENCH_CONCURRENCY (50), then BENCH_TH_REQUESTS
// (40,000) more while the CPU time of each of its threads is read from /proc/<pid>/task (Linux only). Each round
// prints a line per variant and build: requests a second, µs a request of the event loop (MainThread), node's
// worker threads (the request-log SQLite thread, the span-export thread), V8's (compiler, GC) and all threads.
// Then per variant the medians over rounds [min–max] of the main thread and of all threads, and each one's
// difference from `off` of the same build: the median over rounds of (variant ÷ off of that round − 1) [min–max],
// and whether that median for all threads is within issue 43's 5 %. Variants (BENCH_TH_VARIANTS, comma-separated,
// those of gateway-variants.ts: off, logs, trace0, trace0.01, trace1, guardrails, cache, rules, vk, floor);
// BENCH_TH_ROUNDS (3); BENCH_BASELINE: a checkout whose gateway runs in each round too.
// Where bench:instructions counts a capability's instructions, this reads what it costs in the steady state of
// a loaded gateway; the main thread's figure moves by about ±5 % between rounds on this machine.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { listening, questions, startGateway, variantNames } from './gateway-variants.ts';
import { concurrent } from './load.ts';

const WARMUP = Number(process.env['BENCH_TH_WARMUP'] ?? 40_000);
const REQUESTS = Number(process.env['BENCH_TH_REQUESTS'] ?? 40_000);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 50);
const ROUNDS = Number(process.env['BENCH_TH_ROUNDS'] ?? 3);
const names = variantNames('BENCH_TH_VARIANTS', 'off,logs,trace0,trace0.01');
const builds = [
  ...(process.env['BENCH_BASELINE']
    ? [{ label: '@base', root: resolve(process.env['BENCH_BASELINE']) }]
    : []),
  { label: '', root: resolve('.') },
];
/** Clock ticks a second of /proc's utime and stime (USER_HZ: 100 on Linux). */
const TICKS = 100;

/** CPU ticks so far of a process's threads, summed by thread name. */
function threadTicks(pid: number): Map<string, number> {
  const ticks = new Map<string, number>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    ticks.set(name, (ticks.get(name) ?? 0) + Number(fields[11]) + Number(fields[12]));
  }
  return ticks;
}

interface Measured {
  rps: number;
  main: number;
  workers: number;
  v8: number;
  /** Every thread of the process, those above and the rest (libuv's pool). */
  all: number;
}

/** Issue 43's bound: a feature on costs at most this much more CPU a request than `off`. */
const BOUND = 0.05;

const tmp = mkdtempSync(join(tmpdir(), 'gw-bench-threads-'));
const mock = spawn(process.execPath, ['bench/mock-upstream.ts', '0'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const mockUrl = `http://127.0.0.1:${await listening(mock)}`;
const results = new Map<string, Measured[]>();
try {
  let run = 0;
  for (let round = 1; round <= ROUNDS; round++) {
    for (const name of names) {
      for (const build of builds) {
        const dir = join(tmp, String(run++));
        const { gateway, url, headers } = await startGateway({
          root: build.root,
          dir,
          mockUrl,
          variant: name,
        });
        try {
          const body = questions();
          await concurrent(url, body, { concurrency: CONCURRENCY, total: WARMUP }, { headers });
          const before = threadTicks(gateway.pid!);
          const measured = await concurrent(
            url,
            body,
            { concurrency: CONCURRENCY, total: REQUESTS },
            { headers },
          );
          const after = threadTicks(gateway.pid!);
          if (measured.errors > 0)
            throw new Error(`${name}${build.label}: ${measured.errors} requests failed`);
          const perRequest = (match: (thread: string) => boolean) => {
            let ticks = 0;
            for (const [thread, count] of after)
              if (match(thread)) ticks += count - (before.get(thread) ?? 0);
            return (ticks / TICKS / measured.ok) * 1e6;
          };
          const row: Measured = {
            rps: measured.rps,
            main: perRequest((thread) => thread === 'MainThread'),
            workers: perRequest((thread) => thread === 'WorkerThread'),
            v8: perRequest((thread) => thread.startsWith('V8')),
            all: perRequest(() => true),
          };
          const key = `${name}${build.label}`;
          results.set(key, [...(results.get(key) ?? []), row]);
          console.log(
            `[threads] round ${round} ${key}: ${Math.round(row.rps)} req/s, main ${row.main.toFixed(1)} µs,` +
              ` workers ${row.workers.toFixed(1)}, V8 ${row.v8.toFixed(1)}, all ${row.all.toFixed(1)}`,
          );
        } finally {
          gateway.kill('SIGTERM');
          await new Promise((done) => gateway.once('exit', done));
        }
      }
    }
  }
} finally {
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
  `\nCPU µs a request (${REQUESTS} requests at c=${CONCURRENCY} after ${WARMUP}): median of ${ROUNDS} interleaved` +
    ' rounds (min..max); vs off: variant ÷ off of the same round − 1',
);
console.log(line(['variant', 'req/s', 'main µs', 'main vs off', 'all threads µs', 'all vs off', '≤ 5 %']));
for (const [key, rows] of results) {
  // The same build's `off`, round by round: a difference is taken within a round, where the drift is one.
  const label = builds.find((build) => build.label && key.endsWith(build.label))?.label ?? '';
  const off = results.get(`off${label}`);
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
