// `pnpm bench:threads`: CPU a request by thread of an embedded gateway under load, per config variant, the
// variants (and builds) run in turns so that the machine's drifting load falls on all of them alike. Each run
// is its own gateway: BENCH_TH_WARMUP requests (40,000) at c=BENCH_CONCURRENCY (50), then BENCH_TH_REQUESTS
// (40,000) more while the CPU time of each of its threads is read from /proc/<pid>/task (Linux only). It prints
// per variant and build µs a request of the event loop (MainThread), node's worker threads (the request-log
// SQLite thread, the span-export thread) and V8's (compiler, GC), and requests a second, each round and the
// median. Variants (BENCH_TH_VARIANTS, comma-separated): those of `pnpm bench:instructions` (off, logs, trace0,
// trace0.01, trace1, guardrails); BENCH_TH_ROUNDS (3); BENCH_BASELINE: a checkout whose gateway runs in each round too.
// Where bench:instructions counts a capability's instructions, this reads what it costs in the steady state of
// a loaded gateway; the main thread's figure moves by about ±5 % between rounds on this machine.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BODY, listening, startGateway } from './gateway-variants.ts';
import { concurrent } from './load.ts';

const WARMUP = Number(process.env['BENCH_TH_WARMUP'] ?? 40_000);
const REQUESTS = Number(process.env['BENCH_TH_REQUESTS'] ?? 40_000);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 50);
const ROUNDS = Number(process.env['BENCH_TH_ROUNDS'] ?? 3);
const names = (process.env['BENCH_TH_VARIANTS'] ?? 'off,logs,trace0,trace0.01').split(',');
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
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

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
        const { gateway, url } = await startGateway({ root: build.root, dir, mockUrl, variant: name });
        try {
          await concurrent(url, BODY, { concurrency: CONCURRENCY, total: WARMUP });
          const before = threadTicks(gateway.pid!);
          const measured = await concurrent(url, BODY, { concurrency: CONCURRENCY, total: REQUESTS });
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
          };
          const key = `${name}${build.label}`;
          results.set(key, [...(results.get(key) ?? []), row]);
          console.log(
            `[threads] round ${round} ${key}: ${Math.round(row.rps)} req/s, main ${row.main.toFixed(1)} µs,` +
              ` workers ${row.workers.toFixed(1)}, V8 ${row.v8.toFixed(1)}`,
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

console.log(
  `\nCPU µs a request by thread (${REQUESTS} requests at c=${CONCURRENCY} after ${WARMUP}), medians of ${ROUNDS}`,
);
console.log('variant            req/s     main  workers       V8   main by round');
for (const [key, rows] of results) {
  const main = rows.map((row) => row.main);
  console.log(
    `${key.padEnd(16)} ${String(Math.round(median(rows.map((row) => row.rps)))).padStart(7)}` +
      ` ${median(main).toFixed(1).padStart(8)} ${median(rows.map((row) => row.workers))
        .toFixed(1)
        .padStart(8)}` +
      ` ${median(rows.map((row) => row.v8))
        .toFixed(1)
        .padStart(8)}   ${main.map((value) => value.toFixed(1)).join(' ')}`,
  );
}
