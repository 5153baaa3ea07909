import { scaled } from '@gw/testkit';
import { expect } from 'vitest';

/** How long a request may take on an idle machine before it fails the test (stretched by the time scale). */
const REQUEST_CEILING_MS = 10_000;

/** POSTs a JSON value (or raw text) and answers the status, headers and parsed body. */
export async function post(
  url: string,
  body: unknown,
  options: { headers?: Record<string, string>; raw?: boolean; signal?: AbortSignal } = {},
) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: options.raw ? (body as string) : JSON.stringify(body),
    signal: options.signal ?? AbortSignal.timeout(scaled(REQUEST_CEILING_MS)),
  });
  return { status: response.status, headers: response.headers, body: await readJson(response) };
}

export async function get(url: string, headers: Record<string, string> = {}) {
  const response = await fetch(url, { headers, signal: AbortSignal.timeout(scaled(REQUEST_CEILING_MS)) });
  return { status: response.status, headers: response.headers, body: await readJson(response) };
}

/** Any method with an optional JSON body (admin API). */
export async function call(
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const response = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(scaled(REQUEST_CEILING_MS)),
  });
  return { status: response.status, headers: response.headers, body: await readJson(response) };
}

/**
 * POSTs a JSON value as a client would and answers the status, headers, the raw text (a relayed stream is
 * compared byte for byte) and the JSON body when the answer is JSON.
 */
export async function postForText(url: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(scaled(REQUEST_CEILING_MS)),
  });
  const text = await response.text();
  const json: Json = response.headers.get('content-type')?.includes('json') ? JSON.parse(text) : undefined;
  return { status: response.status, headers: response.headers, text, body: json };
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are asserted field by field
export type Json = any;

async function readJson(response: Response): Promise<Json> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** One `data:` event of an SSE answer and the time it arrived. */
export interface TimedEvent {
  data: string;
  at: number;
}

/** Reads an SSE body to its end, timestamping every `data:` event as it arrives. */
export async function readSse(
  response: Response,
  onEvent?: (event: TimedEvent) => void | Promise<void>,
): Promise<TimedEvent[]> {
  const events: TimedEvent[] = [];
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const bytes of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(bytes, { stream: true });
    let end = buffer.indexOf('\n\n');
    while (end !== -1) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of block.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const event = { data: line.slice(5).trim(), at: performance.now() };
        events.push(event);
        await onEvent?.(event);
      }
      end = buffer.indexOf('\n\n');
    }
  }
  return events;
}

/** The gateway error body (README.md "Requests") for an error the gateway produced itself. */
export function expectGatewayError(
  answer: { status: number; headers: Headers; body: Json },
  expected: { status: number; type: string; message?: RegExp | string },
) {
  expect(answer.status).toBe(expected.status);
  expect(answer.body).toMatchObject({
    error: {
      type: expected.type,
      message: expect.any(String),
    },
    status_code: expected.status,
    is_gateway_error: true,
    request_id: expect.any(String),
  });
  for (const field of ['code', 'param'] as const) {
    expect(answer.body.error, `error.${field} is present`).toHaveProperty(field);
    expect([null, 'string']).toContain(
      answer.body.error[field] === null ? null : typeof answer.body.error[field],
    );
  }
  expect(answer.body.request_id, 'request_id names the request').not.toBe('');
  expect(answer.headers.get('x-request-id')).toBe(answer.body.request_id);
  expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
  if (expected.message instanceof RegExp) expect(answer.body.error.message).toMatch(expected.message);
  else if (expected.message) expect(answer.body.error.message).toContain(expected.message);
}
