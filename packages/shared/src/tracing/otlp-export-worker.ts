// The thread that sends gw's span exports (otlp-exporter.ts): POSTs of OTLP JSON with retries, through undici.
// In a thread of its own so that no HTTP client code runs in the gateway's isolate: a few export
// requests there made V8 deoptimize and recompile the server's hottest functions for the client's shapes
// (docs/tracing.md).
import { parentPort, workerData } from 'node:worker_threads';
import { Agent, request } from 'undici';

/** What the exporter sends for one export. */
export interface ExportJob {
  id: number;
  data: Uint8Array;
  timeoutMillis: number;
}

/** What the thread answers: ExportResponse, with an error as plain fields (errors do not cross threads whole). */
export interface ExportOutcome {
  id: number;
  status: 'success' | 'failure' | 'retryable';
  data?: Uint8Array;
  retryInMillis?: number;
  error?: { message: string; code?: number; data?: string };
}

type Response = Omit<ExportOutcome, 'id'>;

/** What an export's answer may hold at most (a partial-success message is a few bytes). */
const RESPONSE_LIMIT = 4 * 1024 * 1024;
/** Tries of one export while the collector answers 429, 502, 503 or 504 or cannot be reached (the SDK's). */
const ATTEMPTS = 5;
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 5_000;

const RETRYABLE_STATUS = new Set([429, 502, 503, 504]);

/** Retry-After as ms: seconds or an HTTP date; undefined when absent or unreadable. */
function retryAfterMs(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1_000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** One POST of an export request; the answer as the SDK's export delegate reads it. */
async function post(
  dispatcher: Agent,
  options: { url: URL; headers: Record<string, string> },
  body: Uint8Array,
  timeoutMs: number,
): Promise<Response> {
  let status: number;
  let retryAfter: string | string[] | undefined;
  const chunks: Buffer[] = [];
  try {
    const response = await request(options.url, {
      method: 'POST',
      dispatcher,
      headers: { ...options.headers, 'content-type': 'application/json' },
      body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = response.statusCode;
    retryAfter = response.headers['retry-after'];
    let size = 0;
    for await (const chunk of response.body) {
      size += chunk.length;
      if (size > RESPONSE_LIMIT) {
        response.body.destroy();
        return {
          status: 'failure',
          error: { message: `OTLP export answer larger than ${RESPONSE_LIMIT} bytes` },
        };
      }
      chunks.push(chunk as Buffer);
    }
  } catch (error) {
    // Unreachable, reset or timed out: worth another try, as the SDK's own transport does.
    return { status: 'retryable', error: { message: (error as Error).message } };
  }
  const data = Buffer.concat(chunks);
  if (status < 300) return data.length > 0 ? { status: 'success', data } : { status: 'success' };
  if (RETRYABLE_STATUS.has(status)) {
    const retryInMillis = retryAfterMs(retryAfter);
    return retryInMillis === undefined ? { status: 'retryable' } : { status: 'retryable', retryInMillis };
  }
  return {
    status: 'failure',
    error: { message: `HTTP ${status}`, code: status, data: data.toString('utf8') },
  };
}

/** Posts with retries and backoff (as the SDK's retrying transport), never past the deadline. */
async function send(
  dispatcher: Agent,
  options: { url: URL; headers: Record<string, string> },
  data: Uint8Array,
  timeoutMillis: number,
): Promise<Response> {
  const deadline = Date.now() + timeoutMillis;
  let backoff = FIRST_BACKOFF_MS;
  let result = await post(dispatcher, options, data, timeoutMillis);
  for (let attempt = 1; attempt < ATTEMPTS && result.status === 'retryable'; attempt++) {
    const jittered = Math.min(backoff * (0.8 + Math.random() * 0.4), MAX_BACKOFF_MS);
    const waitMs = result.retryInMillis ?? jittered;
    backoff *= 1.5;
    if (Date.now() + waitMs >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, waitMs));
    result = await post(dispatcher, options, data, Math.max(1, deadline - Date.now()));
  }
  return result;
}

if (parentPort) {
  const port = parentPort;
  const settings = workerData as { url: string; headers: Record<string, string> };
  const options = { url: new URL(settings.url), headers: settings.headers };
  const dispatcher = new Agent({ connections: 2, keepAliveTimeout: 10_000 });
  port.on('message', (job: ExportJob) => {
    send(dispatcher, options, job.data, job.timeoutMillis).then(
      (response) => port.postMessage({ id: job.id, ...response } satisfies ExportOutcome),
      (error: unknown) =>
        port.postMessage({
          id: job.id,
          status: 'failure',
          error: { message: String((error as Error)?.message ?? error) },
        } satisfies ExportOutcome),
    );
  });
}
