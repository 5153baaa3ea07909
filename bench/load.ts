// The benchmark's load generator: undici keep-alive pools, one precomputed body Buffer, high-resolution clocks.
// Every response is checked (status 200, or 246 when a guardrail redacted it, and a chat completion body, or an
// SSE stream ending in [DONE]);
// failures are counted and sampled, never dropped.
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';

export interface ErrorSample {
  phase: string;
  status?: number;
  body?: string;
  error?: string;
}

export interface LoadOptions {
  /** Extra request headers (the direct target needs the upstream key). */
  headers?: Record<string, string>;
  /** More headers for each request, taken from these in turn (`bench:shards` sends its virtual keys in turn). */
  rotate?: Array<Record<string, string>>;
  /** Label of the phase in error samples. */
  phase?: string;
}

export interface SerialResult {
  /** Latency of each successful request, ms. */
  latencies: number[];
  requests: number;
  errors: number;
  errorSamples: ErrorSample[];
}

export interface ConcurrentResult {
  requests: number;
  ok: number;
  errors: number;
  elapsedMs: number;
  /** Successful requests per second. */
  rps: number;
  /** Latency of each successful request under load, ms. */
  latencies: number[];
  errorSamples: ErrorSample[];
}

const MAX_SAMPLES = 5;
const SAMPLE_CHARS = 400;
const TIMEOUTS = { headersTimeout: 30_000, bodyTimeout: 30_000 };

/** A request body: the same for every request, or made afresh for each (every request a cache miss). */
export type Body = string | Buffer | (() => Buffer);

function toBuffer(body: string | Buffer): Buffer {
  return typeof body === 'string' ? Buffer.from(body) : body;
}

/**
 * The request of each call: precomputed (one per header set of `rotate`, taken in turn), or one per call when the
 * body is made per call.
 */
function requests(url: URL, body: Body, options: LoadOptions): () => ReturnType<typeof requestOptions> {
  const headerSets = (options.rotate ?? [{}]).map((extra) => ({ ...options.headers, ...extra }));
  let turn = 0;
  if (typeof body === 'function')
    return () => requestOptions(url, body(), headerSets[turn++ % headerSets.length]!);
  const buffer = toBuffer(body);
  const prepared = headerSets.map((headers) => requestOptions(url, buffer, headers));
  return () => prepared[turn++ % prepared.length]!;
}

function requestOptions(url: URL, body: Buffer, headers: Record<string, string>) {
  return {
    path: url.pathname + url.search,
    method: 'POST' as const,
    headers: { 'content-type': 'application/json', ...headers },
    body,
  };
}

class Errors {
  count = 0;
  samples: ErrorSample[] = [];
  private readonly phase: string;
  constructor(phase: string) {
    this.phase = phase;
  }
  add(sample: Omit<ErrorSample, 'phase'>): void {
    this.count++;
    if (this.samples.length < MAX_SAMPLES) {
      this.samples.push({
        phase: this.phase,
        ...sample,
        ...(sample.body === undefined ? {} : { body: sample.body.slice(0, SAMPLE_CHARS) }),
      });
    }
  }
  thrown(error: unknown): void {
    const failure = error as Error & { code?: string };
    this.add({ error: `${failure.code ?? failure.name}: ${failure.message}` });
  }
}

/** A served answer: 200, or 246 when a guardrail changed its content (the `+pii` rows). */
const served = (status: number) => status === 200 || status === 246;

/** One non-streaming request; true when it answered 200 (or 246) with a chat completion. */
async function oneRequest(
  pool: Pool,
  request: ReturnType<typeof requestOptions>,
  errors: Errors,
): Promise<boolean> {
  try {
    const { statusCode, body } = await pool.request(request);
    const text = await body.text();
    if (served(statusCode) && text.includes('"choices"')) return true;
    errors.add({ status: statusCode, body: text });
  } catch (error) {
    errors.thrown(error);
  }
  return false;
}

/** `n` requests one after the other on one keep-alive connection; per-request latency in ms. */
export async function serial(
  url: string,
  body: Body,
  n: number,
  options: LoadOptions = {},
): Promise<SerialResult> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: 1, ...TIMEOUTS });
  const next = requests(target, body, options);
  const errors = new Errors(options.phase ?? 'serial');
  const latencies: number[] = [];
  try {
    for (let index = 0; index < n; index++) {
      const request = next();
      const started = performance.now();
      if (await oneRequest(pool, request, errors)) latencies.push(performance.now() - started);
    }
  } finally {
    await pool.close();
  }
  return { latencies, requests: n, errors: errors.count, errorSamples: errors.samples };
}

/**
 * `concurrency` workers, each on its own keep-alive connection, sending back-to-back for `durationMs`
 * (or until `total` requests were sent).
 */
export async function concurrent(
  url: string,
  body: Body,
  settings: { concurrency: number; durationMs?: number; total?: number },
  options: LoadOptions = {},
): Promise<ConcurrentResult> {
  const { concurrency, durationMs, total } = settings;
  if (durationMs === undefined && total === undefined) throw new Error('concurrent: durationMs or total');
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: concurrency, ...TIMEOUTS });
  const next = requests(target, body, options);
  const errors = new Errors(options.phase ?? 'concurrent');
  const latencies: number[] = [];
  let sent = 0;
  let ok = 0;
  const started = performance.now();
  const deadline = durationMs === undefined ? Number.POSITIVE_INFINITY : started + durationMs;
  const limit = total ?? Number.POSITIVE_INFINITY;
  const worker = async () => {
    while (sent < limit && performance.now() < deadline) {
      sent++;
      const request = next();
      const requestStarted = performance.now();
      if (await oneRequest(pool, request, errors)) {
        ok++;
        latencies.push(performance.now() - requestStarted);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    await pool.close();
  }
  const elapsedMs = performance.now() - started;
  return {
    requests: sent,
    ok,
    errors: errors.count,
    elapsedMs,
    rps: (ok * 1000) / elapsedMs,
    latencies,
    errorSamples: errors.samples,
  };
}

const DATA = Buffer.from('data:');
const DONE = 'data: [DONE]';

/**
 * `n` streaming requests one after the other; for each, the time from sending the request to receiving the
 * first bytes of an SSE `data:` line, ms. The rest of each stream is read to its end and must end in [DONE].
 */
export async function firstChunk(
  url: string,
  streamBody: Body,
  n: number,
  options: LoadOptions = {},
): Promise<SerialResult> {
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: 1, ...TIMEOUTS });
  const next = requests(target, streamBody, options);
  const errors = new Errors(options.phase ?? 'first-chunk');
  const latencies: number[] = [];
  try {
    for (let index = 0; index < n; index++) {
      const request = next();
      const started = performance.now();
      try {
        const { statusCode, headers, body } = await pool.request(request);
        const contentType = String(headers['content-type'] ?? '');
        if (!served(statusCode) || !contentType.startsWith('text/event-stream')) {
          errors.add({ status: statusCode, body: `content-type ${contentType}: ${await body.text()}` });
          continue;
        }
        let firstAt = 0;
        let seen: Buffer = Buffer.alloc(0);
        let tail = '';
        for await (const chunk of body as AsyncIterable<Buffer>) {
          if (firstAt === 0) {
            // `data:` may straddle two chunks: look at what came so far until it is found.
            seen = seen.length === 0 ? chunk : Buffer.concat([seen, chunk]);
            if (seen.includes(DATA)) firstAt = performance.now();
          }
          tail = (tail + chunk.toString('latin1')).slice(-64);
        }
        if (firstAt === 0) errors.add({ status: statusCode, body: `no data: line; ended with ${tail}` });
        else if (!tail.trimEnd().endsWith(DONE))
          errors.add({ status: statusCode, body: `no [DONE]: ${tail}` });
        else latencies.push(firstAt - started);
      } catch (error) {
        errors.thrown(error);
      }
    }
  } finally {
    await pool.close();
  }
  return { latencies, requests: n, errors: errors.count, errorSamples: errors.samples };
}

export interface LatencyStats {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Nearest-rank percentiles and the mean of latencies in ms (NaN when there are none). */
export function summarize(latencies: number[]): LatencyStats {
  const sorted = Float64Array.from(latencies).sort();
  const count = sorted.length;
  const rank = (p: number) =>
    count === 0 ? Number.NaN : sorted[Math.max(0, Math.ceil((p / 100) * count) - 1)]!;
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count,
    p50: rank(50),
    p90: rank(90),
    p99: rank(99),
    mean: count === 0 ? Number.NaN : sum / count,
    min: count === 0 ? Number.NaN : sorted[0]!,
    max: count === 0 ? Number.NaN : sorted[count - 1]!,
  };
}
