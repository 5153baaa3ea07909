import type { ServerResponse } from 'node:http';
import { toGatewayError } from '@gw/shared';
import type { RequestContext } from '../../http/route.ts';

/** Anthropic's error types by HTTP status (https://docs.anthropic.com/en/api/errors). */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
    case 405:
    case 422:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 402:
      return 'billing_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    case 504:
      return 'timeout_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/**
 * The Anthropic surface's error mapper: `{type: 'error', error: {type, message}}` with gw's status, so the
 * Anthropic SDK raises its usual exception (RateLimitError for 429, AuthenticationError for 401…). The
 * error's gw type travels in `error.gw_type`, the request id in `request-id` as Anthropic sends it.
 */
export function sendAnthropicError(response: ServerResponse, thrown: unknown, context: RequestContext): void {
  const error = toGatewayError(thrown);
  const payload = JSON.stringify({
    type: 'error',
    error: { type: anthropicErrorType(error.status), message: error.message, gw_type: error.type },
    request_id: context.requestId,
  });
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    'request-id': context.requestId,
    'x-request-id': context.requestId,
  };
  if (error.retryAfter !== undefined) headers['retry-after'] = Math.max(0, Math.ceil(error.retryAfter));
  response.writeHead(error.status, headers);
  response.end(payload);
}
