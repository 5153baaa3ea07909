// The thread that sends gw's span exports (otlp-exporter.ts): POSTs of OTLP JSON with retries, through undici's
// dispatch. In a thread of its own so that no HTTP client code runs in the gateway's isolate: a few export
// requests there made V8 deoptimize and recompile the server's hottest functions for the client's shapes
// (docs/tracing.md).
import { parentPort, workerData } from 'node:worker_threads';
import { Agent, type Dispatcher } from 'undici';

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

/** An answer read whole: status, headers and body (at most RESPONSE_LIMIT bytes). */
interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/**
 * One POST through undici's dispatch handler, read whole: no body stream (a stream would bring Node's stream
 * internals new shapes too, which is what this file avoids).
 */
function dispatchPost(
  dispatcher: Agent,
  url: URL,
  headers: Record<string, string>,
  body: Uint8Array,
  timeoutMs: number,
) {
  return new Promise<Answer>((resolve, reject) => {
    let controller: Dispatcher.DispatchController | undefined;
    let settled = false;
    let answer: Answer = { status: 0, headers: {}, body: Buffer.alloc(0) };
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (error: Error | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (error) reject(error);
      else resolve({ ...answer, body: Buffer.concat(chunks) });
    };
    const timer = setTimeout(() => {
      const error = new Error(`OTLP export timed out after ${timeoutMs} ms`);
      controller?.abort(error);
      finish(error);
    }, timeoutMs);
    dispatcher.dispatch(
      {
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': String(body.length) },
        body: Buffer.from(body.buffer, body.byteOffset, body.byteLength),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      },
      {
        onRequestStart(started) {
          controller = started;
          if (settled) started.abort(new Error('OTLP export given up'));
        },
        onResponseStart(_controller, status, responseHeaders) {
          answer = { status, headers: responseHeaders as Answer['headers'], body: answer.body };
        },
        onResponseData(current, chunk) {
          size += chunk.length;
          if (size > RESPONSE_LIMIT) {
            const error = new Error(`OTLP export answer larger than ${RESPONSE_LIMIT} bytes`);
            current.abort(error);
            finish(error);
            return;
          }
          chunks.push(chunk);
        },
        onResponseEnd() {
          finish(undefined);
        },
        onResponseError(_controller, error) {
          finish(error);
        },
      },
    );
  });
}

/** One POST of an export request; the answer as the SDK's export delegate reads it. */
async function post(
  dispatcher: Agent,
  options: { url: URL; headers: Record<string, string> },
  body: Uint8Array,
  timeoutMs: number,
): Promise<Response> {
  let answer: Answer;
  try {
    answer = await dispatchPost(dispatcher, options.url, options.headers, body, timeoutMs);
  } catch (error) {
    // Unreachable, reset or timed out: worth another try, as the SDK's own transport does.
    return { status: 'retryable', error: { message: (error as Error).message } };
  }
  if (answer.status < 300)
    return answer.body.length > 0 ? { status: 'success', data: answer.body } : { status: 'success' };
  if (RETRYABLE_STATUS.has(answer.status)) {
    const retryInMillis = retryAfterMs(answer.headers['retry-after']);
    return retryInMillis === undefined ? { status: 'retryable' } : { status: 'retryable', retryInMillis };
  }
  return {
    status: 'failure',
    error: { message: `HTTP ${answer.status}`, code: answer.status, data: answer.body.toString('utf8') },
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
