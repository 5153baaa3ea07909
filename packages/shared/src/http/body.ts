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

/** Parses JSON text; a syntax error is a 400 that says so. */
export function parseJson(body: Buffer): unknown {
  if (body.length === 0) throw invalidRequest('request body is empty; a JSON object is expected');
  try {
    return JSON.parse(body.toString('utf8'));
  } catch (error) {
    throw invalidRequest(`request body is not valid JSON: ${(error as Error).message}`);
  }
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
