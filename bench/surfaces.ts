// `pnpm bench:surfaces`: what each compatibility surface costs on top of gw's own /v1/chat/completions.
// Every surface's request is answered by the same upstream call (OpenAI chat on bench/mock-upstream.ts),
// so the differences are the surfaces' translation, framing and routing; one more row serves the Anthropic
// surface from Anthropic's own format (the same mock's Messages API). gw runs embedded in its own
// process; the surfaces are measured round-robin in small batches so that a busy machine weighs on all of
// them alike. Prints a table and writes bench/results/surfaces-latest.json.
// Knobs: BENCH_SURFACES_SERIAL (1000), BENCH_SURFACES_WARMUP (200), BENCH_SURFACES_STREAMS (300),
// BENCH_SURFACES_BATCH (50), BENCH_SURFACES_DURATION_MS (3000 per surface, throughput phase; 0 skips it),
// BENCH_SURFACES_CONCURRENCY (32).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { connect as connectHttp2 } from 'node:http2';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { type LatencyStats, summarize } from './load.ts';

const intEnv = (name: string, fallback: number) => {
  const value = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`${name}: '${process.env[name]}' is not an integer >= 0`);
  return value;
};
const params = {
  serial: intEnv('BENCH_SURFACES_SERIAL', 1000),
  warmup: intEnv('BENCH_SURFACES_WARMUP', 200),
  streams: intEnv('BENCH_SURFACES_STREAMS', 300),
  batch: Math.max(1, intEnv('BENCH_SURFACES_BATCH', 50)),
  durationMs: intEnv('BENCH_SURFACES_DURATION_MS', 3000),
  concurrency: Math.max(1, intEnv('BENCH_SURFACES_CONCURRENCY', 32)),
};

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const HOST = '127.0.0.1';
const API_KEY = 'sk-bench';
const HELLO = 'hello';

interface Surface {
  name: string;
  path: string;
  body: unknown;
  /** Found in every good whole answer. */
  marker: string;
  headers?: Record<string, string>;
  stream?: { path: string; body: unknown; end: string };
  /** Also measured over cleartext HTTP/2 (the Bedrock SDK's default transport). */
  http2?: boolean;
}

const chat = (model: string) => ({ model, messages: [{ role: 'user', content: HELLO }], max_tokens: 16 });
const converse = {
  messages: [{ role: 'user', content: [{ text: HELLO }] }],
  inferenceConfig: { maxTokens: 16 },
};
const genai = {
  contents: [{ role: 'user', parts: [{ text: HELLO }] }],
  generationConfig: { maxOutputTokens: 16 },
};
const anthropic = {
  model: 'openai/gpt-4o-mini',
  max_tokens: 16,
  messages: [{ role: 'user', content: HELLO }],
};
const responses = { model: 'gpt-4o-mini', input: HELLO, max_output_tokens: 16 };

const SURFACES: Surface[] = [
  {
    name: '/v1/chat/completions (baseline)',
    path: '/v1/chat/completions',
    body: chat('openai/gpt-4o-mini'),
    marker: '"choices"',
    stream: {
      path: '/v1/chat/completions',
      body: { ...chat('openai/gpt-4o-mini'), stream: true },
      end: '[DONE]',
    },
  },
  {
    name: '/openai chat',
    path: '/openai/v1/chat/completions',
    body: chat('gpt-4o-mini'),
    marker: '"choices"',
    stream: {
      path: '/openai/v1/chat/completions',
      body: { ...chat('gpt-4o-mini'), stream: true },
      end: '[DONE]',
    },
  },
  {
    name: '/openai responses',
    path: '/openai/v1/responses',
    body: responses,
    marker: '"output"',
    stream: { path: '/openai/v1/responses', body: { ...responses, stream: true }, end: 'response.completed' },
  },
  {
    name: '/anthropic messages',
    path: '/anthropic/v1/messages',
    body: anthropic,
    marker: '"content"',
    headers: { 'anthropic-version': '2023-06-01' },
    stream: { path: '/anthropic/v1/messages', body: { ...anthropic, stream: true }, end: 'message_stop' },
  },
  {
    name: '/anthropic messages → Anthropic',
    path: '/anthropic/v1/messages',
    body: { ...anthropic, model: 'claude-bench' },
    marker: '"content"',
    headers: { 'anthropic-version': '2023-06-01' },
    stream: {
      path: '/anthropic/v1/messages',
      body: { ...anthropic, model: 'claude-bench', stream: true },
      end: 'message_stop',
    },
  },
  {
    name: '/genai generateContent',
    path: '/genai/v1beta/models/openai%2Fgpt-4o-mini:generateContent',
    body: genai,
    marker: '"candidates"',
    stream: {
      path: '/genai/v1beta/models/openai%2Fgpt-4o-mini:streamGenerateContent?alt=sse',
      body: genai,
      end: 'finishReason',
    },
  },
  {
    name: '/litellm chat',
    path: '/litellm/chat/completions',
    body: chat('openai/gpt-4o-mini'),
    marker: '"choices"',
    stream: {
      path: '/litellm/chat/completions',
      body: { ...chat('openai/gpt-4o-mini'), stream: true },
      end: '[DONE]',
    },
  },
  {
    name: '/bedrock converse',
    path: '/bedrock/model/openai%2Fgpt-4o-mini/converse',
    body: converse,
    marker: '"output"',
    http2: true,
    stream: { path: '/bedrock/model/openai%2Fgpt-4o-mini/converse-stream', body: converse, end: 'metadata' },
  },
];

// ---------------------------------------------------------------------------------------------- processes

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of children) child.kill('SIGKILL');
});

function spawnScript(script: string, env: NodeJS.ProcessEnv, log: string, stdout?: 'pipe'): ChildProcess {
  const fd = openSync(log, 'a');
  const child = spawn(process.execPath, [join(ROOT, script)], {
    cwd: ROOT,
    env,
    stdio: ['ignore', stdout ?? fd, fd],
  });
  children.add(child);
  child.on('exit', () => children.delete(child));
  return child;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function waitForHealth(url: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${url}/health`)).status === 200) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`gw did not become healthy at ${url}`);
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => child.kill('SIGKILL'), 20_000).unref();
  });
}

// ---------------------------------------------------------------------------------------------- measuring

interface Client {
  /** One request; its latency in ms, or undefined when it failed. */
  whole(surface: Surface): Promise<number | undefined>;
  /** One stream; time to the first body bytes in ms, or undefined when it failed. */
  stream(surface: Surface): Promise<number | undefined>;
  close(): Promise<void>;
}

const errors: Record<string, string[]> = {};
function fail(name: string, what: string): undefined {
  errors[name] ??= [];
  if (errors[name]!.length < 5) errors[name]!.push(what.slice(0, 300));
  else errors[name]!.push('');
  return undefined;
}

/** Most time one request may wait for its answer's next bytes, in either transport: past it, it fails. */
const REQUEST_IDLE_MS = 30_000;

function http1Client(base: string): Client {
  const pool = new Pool(base, {
    connections: 1,
    headersTimeout: REQUEST_IDLE_MS,
    bodyTimeout: REQUEST_IDLE_MS,
  });
  const bodies = new Map<string, Buffer>();
  const bytes = (value: unknown) => {
    const key = JSON.stringify(value);
    let body = bodies.get(key);
    if (!body) {
      body = Buffer.from(key);
      bodies.set(key, body);
    }
    return body;
  };
  const send = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    pool.request({
      path,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: bytes(body),
    });
  return {
    async whole(surface) {
      const started = performance.now();
      try {
        const { statusCode, body } = await send(surface.path, surface.body, surface.headers);
        const text = await body.text();
        if (statusCode !== 200 || !text.includes(surface.marker))
          return fail(surface.name, `${statusCode} ${text}`);
        return performance.now() - started;
      } catch (error) {
        return fail(surface.name, String(error));
      }
    },
    async stream(surface) {
      const started = performance.now();
      try {
        const stream = surface.stream!;
        const { statusCode, body } = await send(stream.path, stream.body, surface.headers);
        let first = 0;
        let seen = '';
        for await (const chunk of body as AsyncIterable<Buffer>) {
          first ||= performance.now();
          seen = (seen + chunk.toString('latin1')).slice(-4000);
        }
        if (statusCode !== 200 || !seen.includes(stream.end))
          return fail(`${surface.name} stream`, `${statusCode} ${seen}`);
        return first - started;
      } catch (error) {
        return fail(`${surface.name} stream`, String(error));
      }
    },
    close: () => pool.close(),
  };
}

function http2Client(base: string): Client {
  const session = connectHttp2(base);
  // A gateway that dies mid-run fails the requests in flight (their streams error); the session's own error
  // needs a listener, or it would end the bench.
  session.on('error', () => {});
  const request = (surface: Surface, path: string, body: unknown) =>
    new Promise<{ status: number; text: string; firstAt: number }>((resolve, reject) => {
      const stream = session.request({
        ':method': 'POST',
        ':path': path,
        'content-type': 'application/json',
        ...surface.headers,
      });
      let status = 0;
      let firstAt = 0;
      let text = '';
      stream.on('response', (headers) => {
        status = Number(headers[':status']);
      });
      stream.on('data', (chunk: Buffer) => {
        firstAt ||= performance.now();
        text = (text + chunk.toString('latin1')).slice(-2000);
      });
      stream.on('end', () => resolve({ status, text, firstAt }));
      stream.on('error', reject);
      // As the HTTP/1.1 pool's headers and body timeouts: a request whose answer stalls fails, not the bench.
      stream.setTimeout(REQUEST_IDLE_MS, () => {
        stream.close();
        reject(new Error(`no bytes for ${REQUEST_IDLE_MS} ms`));
      });
      stream.end(JSON.stringify(body));
    });
  return {
    async whole(surface) {
      const started = performance.now();
      try {
        const { status, text } = await request(surface, surface.path, surface.body);
        if (status !== 200 || !text.includes(surface.marker))
          return fail(`${surface.name} h2`, `${status} ${text}`);
        return performance.now() - started;
      } catch (error) {
        return fail(`${surface.name} h2`, String(error));
      }
    },
    async stream(surface) {
      const started = performance.now();
      try {
        const { status, text, firstAt } = await request(surface, surface.stream!.path, surface.stream!.body);
        if (status !== 200 || !text.includes(surface.stream!.end))
          return fail(`${surface.name} h2 stream`, `${status}`);
        return firstAt - started;
      } catch (error) {
        return fail(`${surface.name} h2 stream`, String(error));
      }
    },
    close: async () => {
      session.close();
    },
  };
}

interface Row {
  name: string;
  transport: 'http/1.1' | 'h2c';
  whole: LatencyStats;
  stream: LatencyStats;
  rps?: number;
}

/**
 * Round-robin: each target gets `batch` requests in turn, in a fresh random order each round (no target
 * always follows the same one), until each has had `total`.
 */
async function roundRobin(
  targets: Array<{ key: string; run: () => Promise<number | undefined> }>,
  total: number,
): Promise<Map<string, number[]>> {
  const latencies = new Map(targets.map((target) => [target.key, [] as number[]]));
  for (let done = 0; done < total; done += params.batch) {
    const order = [...targets].sort(() => Math.random() - 0.5);
    for (const target of order) {
      for (let index = 0; index < Math.min(params.batch, total - done); index++) {
        const latency = await target.run();
        if (latency !== undefined) latencies.get(target.key)!.push(latency);
      }
    }
  }
  return latencies;
}

/** Successful requests and elapsed time of one slice of load on one surface (`concurrency` connections). */
async function loadSlice(pool: Pool, surface: Surface, body: Buffer, ms: number) {
  let ok = 0;
  const started = performance.now();
  const deadline = started + ms;
  await Promise.all(
    Array.from({ length: params.concurrency }, async () => {
      while (performance.now() < deadline) {
        try {
          const answer = await pool.request({
            path: surface.path,
            method: 'POST',
            headers: { 'content-type': 'application/json', ...surface.headers },
            body,
          });
          const text = await answer.body.text();
          if (answer.statusCode === 200 && text.includes(surface.marker)) ok++;
        } catch {}
      }
    }),
  );
  return { ok, elapsed: performance.now() - started };
}

/**
 * Requests per second of each surface under load, measured in 500 ms slices, the surfaces in a fresh random
 * order each round (one warm-up round first), so that drift in the machine's load spreads over all of them.
 */
async function throughputs(base: string, surfaces: Surface[]): Promise<Map<string, number>> {
  const pools = new Map(
    surfaces.map((surface) => [surface.name, new Pool(base, { connections: params.concurrency })]),
  );
  const bodies = new Map(
    surfaces.map((surface) => [surface.name, Buffer.from(JSON.stringify(surface.body))]),
  );
  const totals = new Map(surfaces.map((surface) => [surface.name, { ok: 0, elapsed: 0 }]));
  const slice = 500;
  const rounds = Math.max(1, Math.round(params.durationMs / slice));
  for (let round = -1; round < rounds; round++) {
    for (const surface of [...surfaces].sort(() => Math.random() - 0.5)) {
      const result = await loadSlice(pools.get(surface.name)!, surface, bodies.get(surface.name)!, slice);
      if (round < 0) continue;
      const total = totals.get(surface.name)!;
      total.ok += result.ok;
      total.elapsed += result.elapsed;
    }
  }
  await Promise.all([...pools.values()].map((pool) => pool.close()));
  return new Map([...totals].map(([name, total]) => [name, (total.ok * 1000) / total.elapsed]));
}

// ---------------------------------------------------------------------------------------------- main

const tmp = mkdtempSync(join(tmpdir(), 'gw-bench-surfaces-'));
const loadAtStart = loadavg();
const mock = spawnScript(
  'bench/mock-upstream.ts',
  { ...process.env, MOCK_PORT: '0', MOCK_API_KEY: API_KEY, MOCK_STREAM_CHUNKS: '5' },
  join(tmp, 'mock.log'),
  'pipe',
);
const mockPort = await new Promise<number>((resolve) =>
  createInterface({ input: mock.stdout! }).once('line', (line) =>
    resolve((JSON.parse(line) as { port: number }).port),
  ),
);
const configPath = join(tmp, 'gateway.json');
writeFileSync(
  configPath,
  JSON.stringify({
    providers: {
      openai: { keys: [{ value: API_KEY }], network_config: { base_url: `http://${HOST}:${mockPort}` } },
      anthropic: { keys: [{ value: API_KEY }], network_config: { base_url: `http://${HOST}:${mockPort}` } },
    },
  }),
);
const port = await freePort();
const env: NodeJS.ProcessEnv = { ...process.env };
for (const name of Object.keys(env)) {
  if (name.startsWith('GW_') || name.startsWith('GATEWAY_') || name === 'REDIS_URL') delete env[name];
}
const gateway = spawnScript(
  'src/embedded.ts',
  {
    ...env,
    PORT: String(port),
    GW_HOST: HOST,
    LOG_LEVEL: 'warn',
    GATEWAY_CONFIG: configPath,
    GATEWAY_DATA_DIR: join(tmp, 'data'),
  },
  join(tmp, 'gw.log'),
);
const base = `http://${HOST}:${port}`;
await waitForHealth(base);
console.log(
  `[bench:surfaces] gw embedded at ${base}, mock at ${mockPort}; ${params.serial} requests and ${params.streams} streams per surface`,
);

const targets = SURFACES.flatMap((surface) => {
  const list: Array<{ surface: Surface; transport: Row['transport']; client: Client }> = [
    { surface, transport: 'http/1.1', client: http1Client(base) },
  ];
  if (surface.http2) list.push({ surface, transport: 'h2c', client: http2Client(base) });
  return list;
});
const key = (target: (typeof targets)[number]) => `${target.surface.name} ${target.transport}`;

await roundRobin(
  targets.map((target) => ({ key: key(target), run: () => target.client.whole(target.surface) })),
  params.warmup,
);
const whole = await roundRobin(
  targets.map((target) => ({ key: key(target), run: () => target.client.whole(target.surface) })),
  params.serial,
);
const streams = await roundRobin(
  targets.map((target) => ({ key: key(target), run: () => target.client.stream(target.surface) })),
  params.streams,
);
const rows: Row[] = targets.map((target) => ({
  name: target.surface.name,
  transport: target.transport,
  whole: summarize(whole.get(key(target))!),
  stream: summarize(streams.get(key(target))!),
}));
if (params.durationMs > 0) {
  const rates = await throughputs(base, SURFACES);
  for (const row of rows) if (row.transport === 'http/1.1') row.rps = rates.get(row.name);
}
for (const target of targets) await target.client.close();
await stop(gateway);
await stop(mock);
rmSync(tmp, { recursive: true, force: true });

const baseline = rows[0]!;
const fixed = (value: number, digits = 3) => (Number.isFinite(value) ? value.toFixed(digits) : '-');
const signed = (value: number) =>
  Number.isFinite(value) ? `${value >= 0 ? '+' : ''}${value.toFixed(3)}` : '-';
const header = [
  'surface'.padEnd(34),
  'via'.padEnd(9),
  'p50'.padStart(7),
  'p99'.padStart(7),
  'mean'.padStart(7),
  'Δp50'.padStart(8),
  'Δmean'.padStart(8),
  'stream 1st p50'.padStart(15),
  'Δ1st p50'.padStart(9),
  `req/s c=${params.concurrency}`.padStart(11),
  'vs base'.padStart(8),
].join(' ');
const lines = rows.map((row) =>
  [
    row.name.padEnd(34),
    row.transport.padEnd(9),
    fixed(row.whole.p50).padStart(7),
    fixed(row.whole.p99).padStart(7),
    fixed(row.whole.mean).padStart(7),
    signed(row.whole.p50 - baseline.whole.p50).padStart(8),
    signed(row.whole.mean - baseline.whole.mean).padStart(8),
    fixed(row.stream.p50).padStart(15),
    signed(row.stream.p50 - baseline.stream.p50).padStart(9),
    (row.rps === undefined ? '-' : row.rps.toFixed(0)).padStart(11),
    (row.rps === undefined || !baseline.rps
      ? '-'
      : `${((row.rps / baseline.rps) * 100).toFixed(1)}%`
    ).padStart(8),
  ].join(' '),
);
const text = [
  `gw surfaces bench ${new Date().toISOString()} — ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, node ${process.version}, load ${loadAtStart.map((value) => value.toFixed(2)).join(' ')}`,
  'latencies in ms, serial on one keep-alive connection, surfaces interleaved in batches; Δ = surface − baseline',
  header,
  ...lines,
].join('\n');
console.log(`\n${text}\n`);
const failed = Object.entries(errors).filter(([, samples]) => samples.length > 0);
if (failed.length > 0) {
  console.log('errors:');
  for (const [name, samples] of failed) console.log(`  ${name}: ${samples.length} (${samples[0]})`);
}
mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
const file = join(ROOT, 'bench', 'results', 'surfaces-latest.json');
writeFileSync(
  file,
  `${JSON.stringify({ at: new Date().toISOString(), params, loadAtStart, loadAtEnd: loadavg(), rows, errors, text }, null, 2)}\n`,
);
console.log(`results: ${file}`);
process.exit(failed.length > 0 ? 1 : 0);
