import { request } from 'undici';
import { SecretReadError } from '../secret-backend.ts';

/** A JSON call to a secret manager's HTTP API, bounded by `timeoutMs`; a non-2xx answer is a SecretReadError. */
export async function callJson(options: {
  service: string;
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  timeoutMs: number;
}): Promise<unknown> {
  let answer: Awaited<ReturnType<typeof request>>;
  try {
    answer = await request(options.url, {
      method: options.method,
      headers: options.headers,
      body: options.body,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      signal: AbortSignal.timeout(options.timeoutMs),
    });
  } catch (error) {
    throw new SecretReadError(`${options.service} is unreachable (${(error as Error).message})`);
  }
  const text = await answer.body.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  if (answer.statusCode < 200 || answer.statusCode >= 300) {
    throw new SecretReadError(`${options.service} answered ${answer.statusCode}${describeError(json)}`);
  }
  if (json === undefined) throw new SecretReadError(`${options.service} answered a body that is not JSON`);
  return json;
}

/**
 * The error code or message of an error answer, shortened. Secret managers do not echo secret values in
 * errors; the length cap keeps an unexpected body from flooding logs.
 */
function describeError(json: unknown): string {
  if (!json || typeof json !== 'object') return '';
  const body = json as Record<string, unknown>;
  const candidates = [
    Array.isArray(body['errors']) ? body['errors'].join('; ') : undefined,
    (body['error'] as { message?: unknown } | undefined)?.message,
    body['error_description'],
    typeof body['error'] === 'string' ? body['error'] : undefined,
    body['message'],
  ];
  const found = candidates.find((candidate) => typeof candidate === 'string' && candidate !== '');
  return typeof found === 'string' ? `: ${found.slice(0, 200)}` : '';
}
