import type { ServerResponse } from 'node:http';
import { type GatewayError, toGatewayError } from './gateway-error.ts';

/** The error body every gateway error answers with (README.md "Requests"). */
export interface ErrorBody {
  error: { type: string; message: string; code: string | null; param: string | null };
  status_code: number;
  is_gateway_error: boolean;
  request_id: string;
  extra_fields?: { provider?: string; model?: string; upstream_error?: unknown; [field: string]: unknown };
}

export function errorBody(error: GatewayError, requestId: string): ErrorBody {
  const body: ErrorBody = {
    error: { type: error.type, message: error.message, code: error.code, param: error.param },
    status_code: error.status,
    is_gateway_error: !error.upstream,
    request_id: requestId,
  };
  if (error.provider || error.model || error.upstreamBody !== undefined) {
    body.extra_fields = {};
    if (error.provider) body.extra_fields.provider = error.provider;
    if (error.model) body.extra_fields.model = error.model;
    if (error.upstreamBody !== undefined) body.extra_fields.upstream_error = error.upstreamBody;
  }
  if (error.extra) body.extra_fields = { ...body.extra_fields, ...error.extra };
  return body;
}

/** Writes any thrown value as the gateway's JSON error answer. */
export function sendError(response: ServerResponse, thrown: unknown, requestId: string): GatewayError {
  const error = toGatewayError(thrown);
  if (response.headersSent) {
    response.destroy();
    return error;
  }
  const payload = JSON.stringify(errorBody(error, requestId));
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    'x-request-id': requestId,
  };
  if (error.retryAfter !== undefined) headers['retry-after'] = Math.max(0, Math.ceil(error.retryAfter));
  response.writeHead(error.status, headers);
  response.end(payload);
  return error;
}
