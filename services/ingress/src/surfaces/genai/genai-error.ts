import type { ServerResponse } from 'node:http';
import { type GatewayError, toGatewayError } from '@gw/shared';
import type { RequestContext } from '../../http/route.ts';

/** Google's canonical status names by HTTP status (google.rpc.Code). */
function genAiStatus(status: number): string {
  switch (status) {
    case 400:
    case 405:
    case 413:
      return 'INVALID_ARGUMENT';
    case 401:
      return 'UNAUTHENTICATED';
    case 402:
    case 429:
      return 'RESOURCE_EXHAUSTED';
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 499:
      return 'CANCELLED';
    case 503:
      return 'UNAVAILABLE';
    case 504:
      return 'DEADLINE_EXCEEDED';
    default:
      return status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION';
  }
}

export function genAiErrorBody(error: GatewayError) {
  return {
    error: {
      code: error.status,
      message: error.message,
      status: genAiStatus(error.status),
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: error.type, domain: 'gw' }],
    },
  };
}

/**
 * The generate-content surface's error mapper: `{error: {code, message, status}}` with gw's HTTP status, so
 * @google/genai raises its ApiError with that status; gw's error type rides in an ErrorInfo detail.
 */
export function sendGenAiError(response: ServerResponse, thrown: unknown, context: RequestContext): void {
  const error = toGatewayError(thrown);
  const payload = JSON.stringify(genAiErrorBody(error));
  const headers: Record<string, string | number> = {
    'content-type': 'application/json; charset=UTF-8',
    'content-length': Buffer.byteLength(payload),
    'x-request-id': context.requestId,
  };
  if (error.retryAfter !== undefined) headers['retry-after'] = Math.max(0, Math.ceil(error.retryAfter));
  response.writeHead(error.status, headers);
  response.end(payload);
}
