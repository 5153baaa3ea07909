import { GatewayError, type SseEvent, SseEventTooLong, SseParser } from '@gw/shared';
import { traceHeaders } from '@gw/shared/tracing';
import type { Dispatcher } from 'undici';
import type { z } from 'zod';
import { networkError, readBounded } from '../upstream-client.ts';
import type { AdapterContext } from './adapter.ts';

/** Pulls a human message out of a provider's error body; each adapter knows its own shape. */
export type ErrorMessageReader = (body: unknown) => string | undefined;

/**
 * The reader of a provider's error bodies from the shapes it answers them in, each a schema that yields the
 * message: the first shape the body matches names it.
 */
export function errorMessageReader(...shapes: ReadonlyArray<z.ZodType<string>>): ErrorMessageReader {
  return (body) => {
    for (const shape of shapes) {
      const parsed = shape.safeParse(body);
      if (parsed.success) return parsed.data;
    }
    return undefined;
  };
}

export interface UpstreamCall {
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  method?: 'GET' | 'POST';
  /** Query string parameters, appended to the path. */
  query?: Record<string, string>;
}

function retryAfterSeconds(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, (date - Date.now()) / 1000);
}

function parseJsonText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * Most bytes of an upstream error body read (and relayed): enough for any provider's error message, and small
 * enough to cross gRPC in the error's trailer (HTTP/2 header lists stop at 64 KiB, base64 makes it 4/3 larger).
 */
const ERROR_BODY_LIMIT = 16 * 1024;

/** Builds the URL of a call: base URL (which may carry a path prefix) plus the operation path. */
export function upstreamUrl(baseUrl: string, call: Pick<UpstreamCall, 'path' | 'query'>): URL {
  const url = new URL(baseUrl.replace(/\/+$/, '') + call.path);
  for (const [name, value] of Object.entries(call.query ?? {})) url.searchParams.set(name, value);
  return url;
}

/** The request of a call: its URL, and the headers with the network config's and the trace context's. */
function upstreamRequest(context: AdapterContext, call: UpstreamCall) {
  return {
    url: upstreamUrl(context.baseUrl, call),
    method: call.method ?? 'POST',
    headers: context.trace
      ? { ...context.network.extra_headers, ...call.headers, ...traceHeaders(context.trace) }
      : { ...context.network.extra_headers, ...call.headers },
    body: call.body,
    signal: context.signal,
    timeoutMs: context.timeoutMs,
  } as const;
}

/** The error of an upstream's answer with a status of 400 or more, from (the start of) its body. */
function upstreamFailure(
  context: AdapterContext,
  status: number,
  headers: Record<string, string | string[] | undefined>,
  text: string,
  readMessage: ErrorMessageReader,
): GatewayError {
  const body = parseJsonText(text);
  return new GatewayError({
    type: 'upstream_error',
    status,
    message:
      readMessage(body) ??
      (typeof body === 'string' && body ? body.slice(0, 500) : `upstream answered ${status}`),
    upstream: true,
    upstreamBody: body,
    provider: context.provider,
    retryAfter: retryAfterSeconds(headers['retry-after']),
  });
}

async function send(context: AdapterContext, call: UpstreamCall, readMessage: ErrorMessageReader) {
  const request = upstreamRequest(context, call);
  const response = await context.http.request(request);
  if (response.statusCode >= 400) {
    const text = (await readBounded(response.body, ERROR_BODY_LIMIT)).toString('utf8');
    throw upstreamFailure(context, response.statusCode, response.headers, text, readMessage);
  }
  return response;
}

/**
 * Most bytes of a whole (not streamed) answer: far above any chat answer, and above the largest embeddings
 * batch a provider returns as JSON floats (2,048 inputs of 3,072 dimensions, about 130 MB).
 */
const WHOLE_ANSWER_LIMIT = 256 * 1024 * 1024;

interface CallJsonOptions<Schema extends z.ZodType> {
  schema: Schema;
  /**
   * A reader of the answer's common shape without the schema, to what the schema makes of it; undefined for
   * any other answer, which the schema parses.
   */
  readPlain?: (raw: unknown) => z.infer<Schema> | undefined;
  readMessage: ErrorMessageReader;
}

/** Sends a call and parses the JSON answer with the adapter's minimal schema. */
export async function callJson<Schema extends z.ZodType>(
  context: AdapterContext,
  call: UpstreamCall,
  options: CallJsonOptions<Schema>,
): Promise<{ raw: unknown; parsed: z.infer<Schema> }> {
  const answer = await context.http.requestWhole(upstreamRequest(context, call), {
    limit: WHOLE_ANSWER_LIMIT,
    errorLimit: ERROR_BODY_LIMIT,
    tooLarge: () => invalidUpstreamBody(context.provider, `is larger than ${WHOLE_ANSWER_LIMIT} bytes`),
  });
  const text = answer.body.toString('utf8');
  if (answer.statusCode >= 400)
    throw upstreamFailure(context, answer.statusCode, answer.headers, text, options.readMessage);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw invalidUpstreamBody(context.provider, 'is not JSON');
  }
  const plain = options.readPlain?.(raw);
  if (plain !== undefined) return { raw, parsed: plain };
  const result = options.schema.safeParse(raw);
  if (!result.success) {
    throw invalidUpstreamBody(
      context.provider,
      `has an unexpected shape (${result.error.issues[0]?.message ?? 'invalid'})`,
    );
  }
  return { raw, parsed: result.data };
}

/** Sends a call and yields the server-sent events of the answer as they arrive. */
export function callSse(
  context: AdapterContext,
  call: UpstreamCall,
  readMessage: ErrorMessageReader,
): AsyncGenerator<SseEvent> {
  // One generator sends and parses: a generator delegating to another costs a resumption on every event.
  return parseSse(() => callStream(context, call, readMessage), context);
}

/** Sends a call and answers the response body as a byte stream (for non-SSE framings). */
export async function callStream(
  context: AdapterContext,
  call: UpstreamCall,
  readMessage: ErrorMessageReader,
): Promise<Dispatcher.ResponseData['body']> {
  return (await send(context, call, readMessage)).body;
}

/** How long the rest of an answer may take once its reader stopped at its end mark (a stream's `[DONE]`). */
const DRAIN_AFTER_READER_MS = 1_000;

type ResponseBody = Dispatcher.ResponseData['body'];

/** The events of the answer `send` opens, which is sent when the first event is asked for. */
async function* parseSse(
  send: () => Promise<ResponseBody>,
  context: AdapterContext,
): AsyncGenerator<SseEvent> {
  const body = await send();
  const parser = new SseParser();
  let read = false;
  try {
    for await (const bytes of body.iterator({ destroyOnReturn: false })) {
      for (const event of parser.push(bytes)) yield event;
    }
    read = true;
    for (const event of parser.end()) yield event;
  } catch (error) {
    read = true;
    if (error instanceof SseEventTooLong) throw invalidUpstreamBody(context.provider, error.message);
    throw networkError(error, { url: new URL(context.baseUrl), signal: context.signal });
  } finally {
    if (!read) release(body, context.signal);
  }
}

/**
 * The reader stopped before the body's end: mostly at a stream's `[DONE]`, whose end is already on its way.
 * The rest is read and dropped, so the connection serves the next call and no abort error is made for an
 * answer that was whole; a caller that went away, or an end that does not come in time, destroys the body.
 */
function release(body: ResponseBody, signal: AbortSignal): void {
  if (signal.aborted || body.destroyed) {
    body.destroy();
    return;
  }
  const timer = setTimeout(() => body.destroy(), DRAIN_AFTER_READER_MS);
  body.once('close', () => clearTimeout(timer));
  body.on('error', () => {});
  body.resume();
}

export function invalidUpstreamBody(provider: string, what: string): GatewayError {
  return new GatewayError({
    type: 'upstream_error',
    status: 502,
    message: `the answer of ${provider} ${what}`,
    upstream: true,
    provider,
  });
}

/** Parses one event's JSON payload, naming the provider when it is broken. */
export function parseEventJson(provider: string, data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw invalidUpstreamBody(provider, 'stream carried an event that is not JSON');
  }
}
