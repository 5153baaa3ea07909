// `pnpm bench:mcp`: tool-execute round trip at p50/p99, through gw versus calling the MCP server directly.
// Targets: server-everything's `echo` over stdio and over Streamable HTTP (loopback). Direct = an MCP SDK
// client in this process; gw = `POST /v1/mcp/tool/execute` on gw embedded (its own process) and gw cluster
// (ingress → BullMQ → mcp-runner), serial requests on one keep-alive connection. Prints a table and writes
// bench/results/mcp-latest.json. Knobs: BENCH_MCP_CALLS (1000), BENCH_MCP_WARMUP (100), BENCH_MODES
// (embedded,cluster), REDIS_URL (cluster).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpConnection } from '@gw/mcp-runner';
import { mcpClientConfigSchema, silentLogger } from '@gw/shared';
import {
  freePort,
  MCP_SERVER_ENTRIES,
  type RunningMcpServer,
  startCluster,
  startEverythingServer,
  stdioServer,
} from '@gw/testkit';
import { Pool } from 'undici';
import { type LatencyStats, summarize } from './load.ts';

const calls = Number(process.env['BENCH_MCP_CALLS'] ?? 1000);
const warmup = Number(process.env['BENCH_MCP_WARMUP'] ?? 100);
const modes = (process.env['BENCH_MODES'] ?? 'embedded,cluster').split(',').map((mode) => mode.trim());
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ADMIN_TOKEN = 'bench-mcp-admin';
const ARGS = { message: 'hello' };

interface Row {
  target: string;
  transport: 'stdio' | 'http';
  stats: LatencyStats;
  errors: number;
}

function clientConfigs(http: RunningMcpServer) {
  return [
    {
      name: 'stdio',
      connection_type: 'stdio',
      stdio_config: stdioServer(MCP_SERVER_ENTRIES.everything, ['stdio']),
    },
    { name: 'http', connection_type: 'http', connection_string: http.url },
  ] as const;
}

async function measure(run: () => Promise<boolean>): Promise<{ stats: LatencyStats; errors: number }> {
  let errors = 0;
  for (let index = 0; index < warmup; index++) if (!(await run())) errors++;
  const latencies: number[] = [];
  for (let index = 0; index < calls; index++) {
    const started = performance.now();
    if (await run()) latencies.push(performance.now() - started);
    else errors++;
  }
  return { stats: summarize(latencies), errors };
}

async function direct(http: RunningMcpServer): Promise<Row[]> {
  const rows: Row[] = [];
  for (const config of clientConfigs(http)) {
    const connection = new McpConnection({
      config: mcpClientConfigSchema.parse(config),
      connectTimeoutMs: 15_000,
      maxConcurrency: 1,
      logger: silentLogger(),
      onChange: () => {},
    });
    connection.start();
    while (connection.state === 'connecting') await new Promise((resolve) => setTimeout(resolve, 20));
    const measured = await measure(async () => {
      const result = await connection.call('echo', ARGS, 10_000);
      return result.content === 'Echo: hello';
    });
    await connection.close();
    rows.push({ target: 'direct', transport: config.name, ...measured });
  }
  return rows;
}

/** Serial tool calls through gw; each must answer 200 with the tool message. */
async function throughGateway(target: string, url: string): Promise<Row[]> {
  const rows: Row[] = [];
  for (const transport of ['stdio', 'http'] as const) {
    const pool = new Pool(url, { connections: 1 });
    const body = JSON.stringify({
      type: 'function',
      id: 'bench',
      function: { name: `${transport}-echo`, arguments: JSON.stringify(ARGS) },
    });
    const measured = await measure(async () => {
      try {
        const answer = await pool.request({
          path: '/v1/mcp/tool/execute',
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
        });
        const text = await answer.body.text();
        return answer.statusCode === 200 && text.includes('Echo: hello');
      } catch {
        return false;
      }
    });
    await pool.close();
    rows.push({ target, transport, ...measured });
  }
  return rows;
}

async function waitConnected(adminUrl: string): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    try {
      const answer = await fetch(`${adminUrl}/api/mcp/clients`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      const clients = (await answer.json()) as Array<{ state: string }>;
      if (clients.length === 2 && clients.every((client) => client.state === 'connected')) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the MCP clients of ${adminUrl} did not connect`);
}

async function embedded(http: RunningMcpServer): Promise<Row[]> {
  const directory = mkdtempSync(join(tmpdir(), 'gw-bench-mcp-'));
  const configPath = join(directory, 'gateway.json');
  writeFileSync(configPath, JSON.stringify({ mcp: { clients: clientConfigs(http) } }));
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'src/embedded.ts')], {
    env: {
      ...process.env,
      PORT: String(port),
      GW_HOST: '127.0.0.1',
      GATEWAY_CONFIG: configPath,
      GATEWAY_DATA_DIR: join(directory, 'data'),
      GATEWAY_ADMIN_TOKEN: ADMIN_TOKEN,
      LOG_LEVEL: 'warn',
    },
    stdio: 'inherit',
  });
  try {
    const url = `http://127.0.0.1:${port}`;
    await waitConnected(url);
    return await throughGateway('gw embedded', url);
  } finally {
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
    rmSync(directory, { recursive: true, force: true });
  }
}

async function cluster(http: RunningMcpServer): Promise<Row[]> {
  const gateway = await startCluster({
    config: { mcp: { clients: clientConfigs(http) as never } },
    adminToken: ADMIN_TOKEN,
  });
  try {
    await waitConnected(gateway.adminUrl);
    return await throughGateway('gw cluster', gateway.url);
  } finally {
    await gateway.close();
  }
}

const http = await startEverythingServer('streamableHttp');
const rows: Row[] = [];
try {
  rows.push(...(await direct(http)));
  if (modes.includes('embedded')) rows.push(...(await embedded(http)));
  if (modes.includes('cluster')) rows.push(...(await cluster(http)));
} finally {
  await http.close();
}

const format = (value: number) => value.toFixed(2).padStart(8);
console.log(
  `\nMCP tool execute (server-everything echo), ${calls} serial calls after ${warmup} warm-up; ms\n`,
);
console.log(
  `${'target'.padEnd(12)} ${'transport'.padEnd(9)}      p50      p99     mean   gw−direct p50  errors`,
);
for (const row of rows) {
  const base = rows.find(
    (candidate) => candidate.target === 'direct' && candidate.transport === row.transport,
  );
  const overhead = row.target === 'direct' || !base ? '' : format(row.stats.p50 - base.stats.p50);
  console.log(
    `${row.target.padEnd(12)} ${row.transport.padEnd(9)} ${format(row.stats.p50)} ${format(row.stats.p99)} ${format(row.stats.mean)}        ${overhead.padStart(8)}  ${row.errors}`,
  );
}
const results = join(ROOT, 'bench', 'results');
mkdirSync(results, { recursive: true });
writeFileSync(
  join(results, 'mcp-latest.json'),
  `${JSON.stringify({ at: new Date().toISOString(), calls, warmup, rows }, null, 2)}\n`,
);
const failed = rows.some((row) => row.errors > 0);
if (failed) console.error('\nsome calls failed: the figures are not clean');
process.exit(failed ? 1 : 0);
