// `pnpm bench:logs-ab`: request logs off against on (metadata only), interleaved in one embedded gateway process
// (`PUT /api/config` toggles `logs.enabled` between rounds), so the machine's other load hits both arms alike.
// Each round sends BENCH_AB_REQUESTS (4000) chat requests at c=BENCH_CONCURRENCY (50) and reads the gateway's
// CPU time (all its threads, /proc/<pid>/stat) and wall time; it prints per arm the median throughput and CPU
// per request over BENCH_AB_ROUNDS (6) rounds each, and the median of the serial p50 latencies.
// BENCH_TRACING=0.01 turns tracing on in both arms.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Pool } from 'undici';

const ROUNDS = Number(process.env['BENCH_AB_ROUNDS'] ?? 6);
const REQUESTS = Number(process.env['BENCH_AB_REQUESTS'] ?? 4000);
const CONCURRENCY = Number(process.env['BENCH_CONCURRENCY'] ?? 50);
const SERIAL = 500;
const TRACING = process.env['BENCH_TRACING'];
const TOKEN = 'bench-admin-token';
const BODY = JSON.stringify({
  model: 'openai/gpt-4o-mini',
  messages: [{ role: 'user', content: 'hello' }],
  max_tokens: 16,
});

function started(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      const port = /"port":(\d+)/.exec(chunk.toString())?.[1];
      if (port) resolve(Number(port));
    });
    child.once('exit', (code) => reject(new Error(`exited with ${code}`)));
  });
}

/** user + system CPU of a process and all its threads, in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const tmp = mkdtempSync(join(tmpdir(), 'gw-logs-ab-'));
const mock = spawn(process.execPath, ['bench/mock-upstream.ts', '0'], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const mockPort = await started(mock);
const configPath = join(tmp, 'gateway.yaml');
writeFileSync(
  configPath,
  [
    'providers:',
    '  openai:',
    "    keys: [{ value: 'sk-bench' }]",
    `    network_config: { base_url: 'http://127.0.0.1:${mockPort}' }`,
    ...(TRACING
      ? [
          'tracing:',
          '  enabled: true',
          `  sampling_ratio: ${TRACING}`,
          `  endpoint: 'http://127.0.0.1:${mockPort}/v1/traces'`,
        ]
      : []),
    '',
  ].join('\n'),
);
const port = 20_000 + Math.floor(Math.random() * 20_000);
const gateway = spawn(process.execPath, ['src/embedded.ts'], {
  env: {
    ...process.env,
    PORT: String(port),
    GW_HOST: '127.0.0.1',
    GATEWAY_DATA_DIR: join(tmp, 'data'),
    GATEWAY_CONFIG: configPath,
    GATEWAY_ADMIN_TOKEN: TOKEN,
    LOG_LEVEL: 'warn',
  },
  stdio: 'inherit',
});
const url = `http://127.0.0.1:${port}`;
for (let attempt = 0; ; attempt++) {
  try {
    if ((await fetch(`${url}/health`)).ok) break;
  } catch {}
  if (attempt > 200) throw new Error('the gateway did not start');
  await sleep(100);
}
const pool = new Pool(url, { connections: CONCURRENCY, pipelining: 1 });
const send = async () => {
  const { statusCode, body } = await pool.request({
    path: '/v1/chat/completions',
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: BODY,
  });
  await body.dump();
  if (statusCode !== 200) throw new Error(`status ${statusCode}`);
};
const setLogs = async (enabled: boolean) => {
  const answer = await fetch(`${url}/api/config`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ logs: { enabled } }),
  });
  if (!answer.ok) throw new Error(`PUT /api/config: ${answer.status} ${await answer.text()}`);
};

const arms = {
  off: { rps: [] as number[], cpu: [] as number[], p50: [] as number[] },
  on: { rps: [] as number[], cpu: [] as number[], p50: [] as number[] },
};
for (let index = 0; index < 500; index++) await send();
for (let round = 0; round < ROUNDS * 2; round++) {
  const arm = round % 2 === 0 ? 'off' : 'on';
  await setLogs(arm === 'on');
  await sleep(1_200); // the writer's flush interval: the other arm's records are written before measuring
  const latencies: number[] = [];
  for (let index = 0; index < SERIAL; index++) {
    const start = performance.now();
    await send();
    latencies.push(performance.now() - start);
  }
  const cpuBefore = cpuMs(gateway.pid!);
  const startedAt = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < REQUESTS) await send();
    }),
  );
  const seconds = (performance.now() - startedAt) / 1000;
  await sleep(1_200); // the records' insert counts in this arm's CPU
  arms[arm].rps.push(REQUESTS / seconds);
  arms[arm].cpu.push(((cpuMs(gateway.pid!) - cpuBefore) * 1000) / REQUESTS);
  arms[arm].p50.push(median(latencies));
  console.log(
    `round ${round} logs ${arm}: ${Math.round(REQUESTS / seconds)} req/s, p50 ${median(latencies).toFixed(3)} ms`,
  );
}
for (const [arm, figures] of Object.entries(arms)) {
  console.log(
    `logs ${arm}: median ${Math.round(median(figures.rps))} req/s at c=${CONCURRENCY}, ${Math.round(median(figures.cpu))} µs CPU per request (incl. 1.2 s after), serial p50 ${median(figures.p50).toFixed(3)} ms`,
  );
}
const ratio = median(arms.on.rps) / median(arms.off.rps);
console.log(
  `throughput on/off: ${(ratio * 100).toFixed(1)} %; p50 on − off: ${(median(arms.on.p50) - median(arms.off.p50)).toFixed(3)} ms`,
);
await pool.close();
gateway.kill('SIGTERM');
mock.kill('SIGTERM');
await new Promise((resolve) => gateway.once('exit', resolve));
rmSync(tmp, { recursive: true, force: true });
