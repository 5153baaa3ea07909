// `pnpm bench:cache-ab`: the response cache's cost on a busy machine, measured interleaved. Two embedded
// gateways run side by side (each its own process, the mock upstream a third): one with the cache off, one
// with `cache: { enabled: true, types: [exact] }`. Requests go round robin, one at a time, to four targets:
// cache off (a new question each time), cache on (a new question each time: every request a miss, its answer
// stored), cache on (one question again and again: exact hits) and the mock directly. Interleaving puts
// every target under the same load at the same moments, so the differences hold where separate runs
// (pnpm bench) drift by more than what is measured. Knobs: BENCH_AB_ROUNDS (3000), BENCH_AB_WARMUP (300),
// BENCH_AB_HITS=0 (leave the hits out: the cache-on gateway then serves misses only, as the cache-off one).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Pool } from 'undici';
import { summarize } from './load.ts';

const rounds = Number(process.env['BENCH_AB_ROUNDS'] ?? 3_000);
const warmup = Number(process.env['BENCH_AB_WARMUP'] ?? 300);
const withHits = process.env['BENCH_AB_HITS'] !== '0';
const HOST = '127.0.0.1';
const tmp = mkdtempSync(join(tmpdir(), 'gw-cache-ab-'));
const children: ChildProcess[] = [];

async function startMock(): Promise<string> {
  const mock = spawn(process.execPath, ['bench/mock-upstream.ts'], {
    env: { ...process.env, MOCK_PORT: '0' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(mock);
  const line = await new Promise<string>((resolve) =>
    createInterface({ input: mock.stdout! }).once('line', resolve),
  );
  return `http://${HOST}:${(JSON.parse(line) as { port: number }).port}`;
}

/** An embedded gateway on a free port in front of the mock; its base URL once /health answers. */
async function startGateway(name: string, mockUrl: string, cache: boolean): Promise<string> {
  const config = join(tmp, `${name}.yaml`);
  const cacheLine = cache ? 'cache: { enabled: true, types: [exact] }\n' : '';
  writeFileSync(
    config,
    `providers:\n  openai:\n    keys: [{ value: sk-bench }]\n    network_config: { base_url: '${mockUrl}' }\n${cacheLine}`,
  );
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  const child = spawn(process.execPath, ['src/embedded.ts'], {
    env: {
      ...process.env,
      PORT: String(port),
      GW_HOST: HOST,
      GATEWAY_CONFIG: config,
      GATEWAY_DATA_DIR: join(tmp, name),
      LOG_LEVEL: 'warn',
    },
    stdio: 'inherit',
  });
  children.push(child);
  const base = `http://${HOST}:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode})`);
    if (Date.now() > deadline) throw new Error(`${name} did not answer /health in time`);
    const healthy = await fetch(`${base}/health`).then(
      (response) => response.ok,
      () => false,
    );
    if (healthy) return base;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let asked = 0;
const question = (fixed: boolean, model: string) =>
  JSON.stringify({
    model,
    messages: [{ role: 'user', content: fixed ? 'hello' : `hello ${asked++}` }],
    max_tokens: 16,
  });

interface Target {
  name: string;
  pool: Pool;
  body: () => string;
  headers: Record<string, string>;
  latencies: number[];
}

async function once(target: Target, record: boolean): Promise<void> {
  const body = target.body();
  const started = performance.now();
  const response = await target.pool.request({
    method: 'POST',
    path: '/v1/chat/completions',
    headers: { 'content-type': 'application/json', ...target.headers },
    body,
  });
  const text = await response.body.text();
  if (response.statusCode !== 200 || !text.includes('"choices"')) {
    throw new Error(`${target.name}: ${response.statusCode} ${text.slice(0, 200)}`);
  }
  if (record) target.latencies.push(performance.now() - started);
}

try {
  const mockUrl = await startMock();
  const [off, on] = await Promise.all([
    startGateway('cache-off', mockUrl, false),
    startGateway('cache-on', mockUrl, true),
  ]);
  const target = (name: string, base: string, body: () => string, headers = {}): Target => ({
    name,
    pool: new Pool(base, { connections: 1 }),
    body,
    headers,
    latencies: [],
  });
  const gw = 'openai/gpt-4o-mini';
  const targets = [
    target('gw, cache off', off, () => question(false, gw)),
    target('gw, cache on, miss', on, () => question(false, gw)),
    ...(withHits ? [target('gw, cache on, exact hit', on, () => question(true, gw))] : []),
    target('direct to the mock', mockUrl, () => question(true, 'gpt-4o-mini'), {
      authorization: 'Bearer sk-bench',
    }),
  ];
  for (let round = 0; round < warmup + rounds; round++) {
    for (const each of targets) await once(each, round >= warmup);
  }
  const stats = new Map(targets.map((each) => [each.name, summarize(each.latencies)]));
  console.log(`${rounds} interleaved rounds after ${warmup} warm-up; serial, one request at a time (ms)`);
  for (const [name, { p50, p90, p99 }] of stats) {
    console.log(`${name.padEnd(26)} p50 ${p50.toFixed(3)}   p90 ${p90.toFixed(3)}   p99 ${p99.toFixed(3)}`);
  }
  const p50 = (name: string) => stats.get(name)!.p50;
  const micros = (ms: number) => `${ms >= 0 ? '+' : ''}${(ms * 1_000).toFixed(0)} µs`;
  console.log(`a miss adds, p50: ${micros(p50('gw, cache on, miss') - p50('gw, cache off'))}`);
  if (withHits) {
    const hit = p50('gw, cache on, exact hit');
    console.log(`an exact hit against direct, p50: ${micros(hit - p50('direct to the mock'))}`);
  }
  await Promise.all(targets.map((each) => each.pool.close()));
} finally {
  for (const child of children) child.kill('SIGTERM');
  rmSync(tmp, { recursive: true, force: true });
}
