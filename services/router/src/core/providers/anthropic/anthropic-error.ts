import { GatewayError } from '@gw/shared';
import { z } from 'zod';
import { errorMessageReader } from '../upstream-call.ts';

/** Anthropic answers errors as `{ "type": "error", "error": { "type": "…", "message": "…" } }`. */
export const readAnthropicErrorMessage = errorMessageReader(
  z.object({ error: z.object({ message: z.string() }) }).transform((body) => body.error.message),
  z.object({ message: z.string() }).transform((body) => body.message),
);

/**
 * The HTTP status Anthropic documents for each error type. An error event inside a stream arrives after a
 * 200, so its type is the only statement of the status; 529 keeps `overloaded_error` transient (retried).
 */
const STATUS_BY_ERROR_TYPE: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/** An `error` event inside a stream that had already started. */
export function anthropicStreamError(
  provider: string,
  payload: { error: { type: string; message?: string | undefined } },
): GatewayError {
  return new GatewayError({
    type: 'upstream_error',
    status: STATUS_BY_ERROR_TYPE[payload.error.type] ?? 502,
    message: payload.error.message ?? `${provider} stream failed (${payload.error.type})`,
    code: payload.error.type,
    upstream: true,
    upstreamBody: payload,
    provider,
  });
}
