// `node bench/slow-readers.ts`: RSS of an embedded gw (its own process) while slow clients read large streams.
// Each of BENCH_READERS (20) clients asks for a stream of BENCH_STREAM_MB (8) MB from a fake upstream that
// writes as fast as its socket takes bytes, and reads nothing for BENCH_HOLD_MS (5000); the gateway's RSS is
// read from /proc before the streams and at the end of the hold. Without back-pressure gw would buffer every
// stream whole; with it, each stream holds about its sockets' buffers.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drained } from '@gw/shared';
import { freePort, waitFor } from '@gw/testkit';

const readers = Number(process.env['BENCH_READERS'] ?? 20);
const streamMb = Number(process.env['BENCH_STREAM_MB'] ?? 8);
const holdMs = Number(process.env['BENCH_HOLD_MS'] ?? 5_000);
const PIECE = 'x'.repeat(4_000);
const EVENT = `data: ${JSON.stringify({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta: { content: PIECE }, finish_reason: null }],
})}\n\n`;

let upstreamBytes = 0;
const upstream = createServer(async (_request, response) => {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  for (let written = 0; written < streamMb * 1024 * 1024 && !response.destroyed; written += EVENT.length) {
    upstreamBytes += EVENT.length;
    if (!response.write(EVENT)) await drained(response);
  }
  response.end('data: [DONE]\n\n');
});
await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));

const directory = mkdtempSync(join(tmpdir(), 'gw-slow-readers-'));
const configPath = join(directory, 'gw.json');
const upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
writeFileSync(
  configPath,
  JSON.stringify({
    providers: { openai: { keys: [{ value: 'sk-x' }], network_config: { base_url: upstreamUrl } } },
  }),
);
const port = await freePort();
const gateway = spawn(process.execPath, [fileURLToPath(new URL('../src/embedded.ts', import.meta.url))], {
  env: {
    ...process.env,
    PORT: String(port),
    GW_HOST: '127.0.0.1',
    GATEWAY_CONFIG: configPath,
    GATEWAY_DATA_DIR: directory,
    LOG_LEVEL: 'warn',
  },
  stdio: 'inherit',
});
const rssMb = () => {
  const line = readFileSync(`/proc/${gateway.pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
  return Number(line?.[1] ?? 0) / 1024;
};

try {
  await waitFor(
    () =>
      new Promise<boolean>((resolve) => {
        const probe = request({ host: '127.0.0.1', port, path: '/health' }, (answer) => {
          answer.resume();
          resolve(answer.statusCode === 200);
        });
        probe.on('error', () => resolve(false));
        probe.end();
      }),
    { timeoutMs: 20_000, what: 'the gateway' },
  );
  const before = rssMb();
  const answers = await Promise.all(
    Array.from(
      { length: readers },
      () =>
        new Promise<IncomingMessage>((resolve, reject) => {
          const sent = request(
            {
              host: '127.0.0.1',
              port,
              path: '/v1/chat/completions',
              method: 'POST',
              headers: { 'content-type': 'application/json' },
            },
            resolve,
          );
          sent.on('error', reject);
          sent.end(
            JSON.stringify({ model: 'openai/m', messages: [{ role: 'user', content: 'hi' }], stream: true }),
          );
        }),
    ),
  );
  for (const answer of answers) answer.pause();
  await new Promise((resolve) => setTimeout(resolve, holdMs));
  const during = rssMb();
  const sent = upstreamBytes / 1024 / 1024;
  for (const answer of answers) answer.destroy();
  console.log(
    `${readers} readers of ${streamMb} MB streams, reading nothing for ${holdMs} ms: gateway RSS ` +
      `${before.toFixed(1)} MB before, ${during.toFixed(1)} MB during (+${(during - before).toFixed(1)} MB); ` +
      `the upstream sent ${sent.toFixed(1)} of ${readers * streamMb} MB`,
  );
} finally {
  gateway.kill('SIGTERM');
  await once(gateway, 'exit');
  upstream.closeAllConnections();
  upstream.close();
  rmSync(directory, { recursive: true, force: true });
}
