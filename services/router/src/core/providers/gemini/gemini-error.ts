import { GatewayError } from '@gw/shared';
import { z } from 'zod';
import { errorMessageReader } from '../upstream-call.ts';

function errorObject(body: unknown): { code?: unknown; message?: unknown } | undefined {
  // A failed stream request without `alt=sse` answers the error inside a one-element array.
  const candidate = Array.isArray(body) ? body[0] : body;
  if (typeof candidate !== 'object' || candidate === null) return undefined;
  const error = (candidate as { error?: unknown }).error;
  return typeof error === 'object' && error !== null ? error : undefined;
}

const googleErrorMessage = z
  .object({ error: z.object({ message: z.string() }) })
  .transform((body) => body.error.message);

/**
 * Google APIs answer `{ "error": { "code": 400, "message": …, "status": "INVALID_ARGUMENT" } }`; a failed
 * stream request without `alt=sse`, the same inside a one-element array.
 */
export const readGeminiErrorMessage = errorMessageReader(
  googleErrorMessage,
  z.tuple([googleErrorMessage], z.unknown()).transform(([message]) => message),
);

/** True when a stream event carries an error instead of a GenerateContentResponse. */
export function isGeminiErrorEvent(payload: unknown): boolean {
  return errorObject(payload) !== undefined;
}

/** An error event inside a stream that had already started; its `code` is the HTTP status Google meant. */
export function geminiStreamError(provider: string, payload: unknown): GatewayError {
  const code = errorObject(payload)?.code;
  return new GatewayError({
    type: 'upstream_error',
    status: typeof code === 'number' && code >= 400 && code <= 599 ? code : 502,
    message: readGeminiErrorMessage(payload) ?? `${provider} stream failed`,
    upstream: true,
    upstreamBody: payload,
    provider,
  });
}
