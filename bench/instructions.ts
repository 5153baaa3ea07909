// `pnpm bench:instructions`: instructions a request costs an embedded gateway, counted by valgrind's callgrind,
// per variant of its config, against the bench's mock upstream. Instruction counts do not move with the
// machine's other load as CPU time does (runs of one build agree within about 0.5 %), so a cost of a few
// percent shows here where `pnpm bench`'s CPU figures cannot tell it from noise. Each variant is its own
// gateway under callgrind: BENCH_IX_WARMUP requests (2000) at c=BENCH_IX_CONCURRENCY (10), counters zeroed,
// BENCH_IX_REQUESTS (3000) more, counters dumped; the result is instructions per request, for the whole process
// and by thread (the event loop; the request-log and span-export threads; V8's compiler and GC threads).
// Variants (BENCH_IX_VARIANTS, comma-separated): off (logs and tracing off), logs (metadata-only request logs),
// trace0, trace0.01 and trace1 (tracing at that ratio), guardrails (a PII guardrail whose rule applies to no
// request), cache (the response cache, every request a miss), rules (ten routing rules, none matching), vk (the
// bench's virtual key on every request), each with logs off but `logs` (gateway-variants.ts); floor: the bench's
// minimal Node proxy (bench/floor-proxy.ts), the least a Node gateway can do, as `pnpm bench`'s floor row.
// BENCH_BASELINE: a checkout whose gateway runs instead.
// BENCH_IX_STREAM=1: streamed requests instead (instructions a stream of the mock's 5 chunks).
// BENCH_IX_KEEP: a directory the callgrind dumps are copied to (for callgrind_annotate by function).
// Needs valgrind (and its callgrind_control and callgrind_annotate); about three minutes a variant.
// What runs on a timer costs more per request here than under load (valgrind runs the gateway at ~30 requests
// a second): a request-log batch is written each second, so it holds ~30 records instead of up to 1,000.
import { execFileSync, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { listening, questions, startGateway, variantNames } from './gateway-variants.ts';
import { concurrent } from './load.ts';

/** BENCH_IX_STREAM=1: every request streams (`stream: true`, read to its end): instructions a stream. */
const STREAM = process.env['BENCH_IX_STREAM'] === '1';
const WARMUP = Number(process.env['BENCH_IX_WARMUP'] ?? 2000);
const REQUESTS = Number(process.env['BENCH_IX_REQUESTS'] ?? 3000);
const CONCURRENCY = Number(process.env['BENCH_IX_CONCURRENCY'] ?? 10);
/**
 * V8 optimizes a function after thousands of calls; under valgrind a function run once a request would reach
 * TurboFan inside the counted window, and what ran unoptimized until then was counted (the main thread read
 * 390k instructions a request with V8's own thresholds, 307k with these). Tiering up ten times sooner counts
 * the steady state a gateway under load runs in. BENCH_IX_NODE_FLAGS replaces them ('' for V8's own).
 */
const NODE_FLAGS = (
  process.env['BENCH_IX_NODE_FLAGS'] ??
  '--invocation-count-for-turbofan=300 --invocation-count-for-maglev=40 --minimum-invocations-after-ic-update=50'
)
  .split(' ')
  .filter(Boolean);
const ROOT = resolve(process.env['BENCH_BASELINE'] ?? '.');
/** Instructions of a callgrind dump: the whole process, the main thread, worker threads (node's), the rest. */
function counts(file: string): { total: number; main: number; workers: number } {
  const text = execFileSync('callgrind_annotate', ['--inclusive=yes', '--threshold=100', file], {
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const count = (pattern: RegExp) => Number(pattern.exec(text)?.[1]?.replaceAll(',', '') ?? 0);
  return {
    total: count(/^\s*([\d,]+) .*PROGRAM TOTALS/m),
    main: count(/^\s*([\d,]+) .*__libc_start_main/m),
    workers: count(/^\s*([\d,]+) .*node::worker::Worker::Run\(\)/m),
  };
}

const names = variantNames('BENCH_IX_VARIANTS', 'off,logs,trace0,trace0.01');

const tmp = mkdtempSync(join(tmpdir(), 'gw-bench-ix-'));
const mock = spawn(process.execPath, ['bench/mock-upstream.ts', '0'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const mockUrl = `http://127.0.0.1:${await listening(mock)}`;
const rows: string[] = [];
let base: number | undefined;
try {
  for (const [index, name] of names.entries()) {
    const dir = join(tmp, `${index}-${name}`);
    const out = join(tmp, `${index}-${name}.callgrind`);
    const { gateway, url, headers } = await startGateway({
      root: ROOT,
      dir,
      mockUrl,
      variant: name,
      prefix: ['valgrind', '--tool=callgrind', '--smc-check=all-non-file', `--callgrind-out-file=${out}`],
      nodeFlags: NODE_FLAGS,
      // Under valgrind on a busy machine a gateway took more than 5 minutes to answer /health (2026-12-03).
      startTimeoutMs: 20 * 60_000,
    });
    console.log(`[instructions] ${name}: gateway up under callgrind, ${WARMUP} warm-up requests`);
    const body = questions(STREAM);
    await concurrent(url, body, { concurrency: CONCURRENCY, total: WARMUP }, { headers });
    await sleep(1500);
    execFileSync('callgrind_control', ['-z', String(gateway.pid)], { stdio: 'ignore' });
    const measured = await concurrent(url, body, { concurrency: CONCURRENCY, total: REQUESTS }, { headers });
    // What the requests left for later (a log batch, an export) runs before the dump.
    await sleep(1500);
    execFileSync('callgrind_control', ['-d', String(gateway.pid)], { stdio: 'ignore' });
    await sleep(500);
    gateway.kill('SIGTERM');
    await new Promise((done) => gateway.once('exit', done));
    const dump = readdirSync(tmp).find((file) => file.startsWith(`${index}-${name}.callgrind.`));
    if (!dump) throw new Error(`${name}: no callgrind dump`);
    const keep = process.env['BENCH_IX_KEEP'];
    if (keep) {
      mkdirSync(keep, { recursive: true });
      copyFileSync(join(tmp, dump), join(keep, `${name}.callgrind`));
    }
    const { total, main, workers } = counts(join(tmp, dump));
    const per = (value: number) => (value / measured.ok / 1000).toFixed(1);
    base ??= total;
    rows.push(
      `${name.padEnd(10)} ${per(total).padStart(8)}k ${`${(((total - base) / base) * 100).toFixed(1)}%`.padStart(8)}` +
        ` ${per(main).padStart(8)}k ${per(workers).padStart(8)}k ${per(total - main - workers).padStart(8)}k` +
        `   ${measured.ok} ok, ${measured.errors} errors`,
    );
  }
} finally {
  mock.kill('SIGTERM');
  rmSync(tmp, { recursive: true, force: true });
}
console.log(`\ninstructions per request (${REQUESTS} requests at c=${CONCURRENCY} after ${WARMUP}), ${ROOT}`);
console.log(`variant       total  vs first      main  workers  V8 etc.`);
for (const row of rows) console.log(row);
