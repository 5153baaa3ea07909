/**
 * The one error hierarchy of gw. Every error the gateway answers itself is a GatewayError; transports
 * translate it once (errors/http.ts for HTTP, errors/grpc.ts for gRPC).
 */

/** Values of `error.type` in the error body (DESIGN.md §6). */
export const ERROR_TYPES = [
  'invalid_request',
  'payload_too_large',
  'not_found',
  'method_not_allowed',
  'unsupported_operation',
  'unknown_provider',
  'provider_not_configured',
  'missing_required_header',
  'unauthorized',
  'forbidden',
  'virtual_key_required',
  'virtual_key_invalid',
  'virtual_key_inactive',
  'virtual_key_expired',
  'provider_not_allowed',
  'model_not_allowed',
  'budget_exceeded',
  'token_limit_exceeded',
  'request_limit_exceeded',
  'queue_full',
  'guardrail_blocked',
  'mcp_not_configured',
  'mcp_tool_not_found',
  'mcp_tool_not_allowed',
  'upstream_error',
  'upstream_timeout',
  'upstream_unreachable',
  'all_targets_failed',
  'service_unavailable',
  'internal_error',
  /** The caller went away or cancelled (499); never answered, only recorded. */
  'cancelled',
] as const;

export type ErrorType = (typeof ERROR_TYPES)[number];

export interface GatewayErrorOptions {
  type: ErrorType;
  status: number;
  message: string;
  code?: string | null;
  param?: string | null;
  provider?: string;
  model?: string;
  /** Seconds after which the caller may retry (429, 503). */
  retryAfter?: number;
  /** True when the error was produced by the upstream provider rather than by gw itself. */
  upstream?: boolean;
  /** The provider's own error body, kept for the caller. */
  upstreamBody?: unknown;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly type: ErrorType;
  readonly status: number;
  readonly code: string | null;
  readonly param: string | null;
  readonly provider: string | undefined;
  readonly model: string | undefined;
  readonly retryAfter: number | undefined;
  readonly upstream: boolean;
  readonly upstreamBody: unknown;

  constructor(options: GatewayErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.type = options.type;
    this.status = options.status;
    this.code = options.code ?? null;
    this.param = options.param ?? null;
    this.provider = options.provider;
    this.model = options.model;
    this.retryAfter = options.retryAfter;
    this.upstream = options.upstream ?? false;
    this.upstreamBody = options.upstreamBody;
  }

  /** The fields that cross a process boundary (gRPC metadata, job results). */
  toJSON(): GatewayErrorOptions {
    return {
      type: this.type,
      status: this.status,
      message: this.message,
      code: this.code,
      param: this.param,
      provider: this.provider,
      model: this.model,
      retryAfter: this.retryAfter,
      upstream: this.upstream,
      upstreamBody: this.upstreamBody,
    };
  }

  /** A copy naming the provider and model the error happened on. */
  withTarget(provider: string, model: string): GatewayError {
    return new GatewayError({ ...this.toJSON(), provider, model, cause: this.cause });
  }
}

export function invalidRequest(message: string, param?: string): GatewayError {
  return new GatewayError({ type: 'invalid_request', status: 400, message, param: param ?? null });
}

export function unsupportedOperation(provider: string, operation: string): GatewayError {
  return new GatewayError({
    type: 'unsupported_operation',
    status: 400,
    message: `provider '${provider}' does not support the operation '${operation}'`,
    provider,
  });
}

export function internalError(message = 'internal error', cause?: unknown): GatewayError {
  return new GatewayError({ type: 'internal_error', status: 500, message, cause });
}

/** Any thrown value as a GatewayError; unknown errors become a 500 without leaking their text. */
export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return internalError('internal error', error);
}

/** Transient upstream failures are retried; everything else fails at once (SPEC.md Errors rule 2). */
export function isTransient(error: GatewayError): boolean {
  if (error.type === 'upstream_unreachable' || error.type === 'upstream_timeout') return true;
  if (!error.upstream) return false;
  return error.status === 408 || error.status === 429 || error.status >= 500;
}
