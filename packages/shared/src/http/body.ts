import { isUtf8 } from 'node:buffer';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { z } from 'zod';
import { GatewayError, invalidRequest } from '../errors/gateway-error.ts';

/** Reads a request body up to `limit` bytes; 413 past it (checked on Content-Length first). */
export function readBody(request: IncomingMessage, limit: number): Promise<Buffer> {
  const declared = Number(request.headers['content-length']);
  if (declared > limit) return Promise.reject(payloadTooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.removeAllListeners('data');
        request.resume();
        reject(payloadTooLarge(limit));
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size)));
    request.on('error', reject);
  });
}

function payloadTooLarge(limit: number): GatewayError {
  return new GatewayError({
    type: 'payload_too_large',
    message: `request body exceeds the limit of ${limit} bytes`,
  });
}

/** Deepest nesting of arrays and objects a JSON body may have (chat requests need about ten). */
const MAX_JSON_DEPTH = 128;

/**
 * Whether arrays and objects nest deeper than `limit` in a parsed JSON value. Checked after JSON.parse (V8's
 * parser is not recursive, so no depth hurts it) and before anything recursive meets the value; it visits each
 * array and object once and stops at the first too deep, where a scan of the text would read every character.
 */
function nestingExceeds(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (limit === 0) return true;
  if (Array.isArray(value)) {
    for (const item of value) if (nestingExceeds(item, limit - 1)) return true;
    return false;
  }
  for (const key in value) {
    if (nestingExceeds((value as Record<string, unknown>)[key], limit - 1)) return true;
  }
  return false;
}

/**
 * Parses a JSON body: refused with a 400 that says why when it is empty, not UTF-8, nested deeper than
 * MAX_JSON_DEPTH or not JSON.
 */
export function parseJson(body: Buffer): unknown {
  if (body.length === 0) throw invalidRequest('request body is empty; a JSON object is expected');
  if (!isUtf8(body)) throw invalidRequest('request body is not valid UTF-8');
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw invalidRequest(`request body is not valid JSON: ${(error as Error).message}`);
  }
  if (nestingExceeds(value, MAX_JSON_DEPTH)) {
    throw invalidRequest(`request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`);
  }
  return value;
}

/** Validates with zod; the 400 names the first offending field. */
export function validate<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  prefix = '',
): z.infer<Schema> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = [prefix, ...issue.path.map(String)].filter(Boolean).join('.');
  const message =
    issue.code === 'invalid_type' && issue.message.endsWith('received undefined')
      ? 'is required'
      : issue.message;
  throw invalidRequest(path ? `${path}: ${message}` : message, path || undefined);
}

/** Resolves when a response can take more bytes again (its socket drained), or is gone. */
export function drained(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}

export function sendJson(
  response: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  const payload = JSON.stringify(value);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    ...headers,
  });
  response.end(payload);
}
