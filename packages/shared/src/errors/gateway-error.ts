import { z } from 'zod';

/**
 * The one error hierarchy of gw. Every error the gateway answers itself is a GatewayError; transports
 * translate it once (errors/http.ts for HTTP, grpc/grpc-errors.ts for gRPC).
 */

/**
 * Every value of `error.type` in the error body (README.md "Requests"), its HTTP status and what it means. The status
 * of an error comes from here; only errors that relay an upstream's answer (`upstream_error`,
 * `all_targets_failed`) carry the upstream's own status instead. README.md's error table is generated from
 * this list (`node scripts/error-table.ts`).
 */
export const ERROR_CATALOG = {
  invalid_request: { status: 400, meaning: 'malformed request; the message names the field' },
  payload_too_large: { status: 413, meaning: 'the body is larger than `client.max_request_body_bytes`' },
  request_timeout: {
    status: 408,
    meaning:
      'the request was not received in time (`GW_REQUEST_TIMEOUT_MS`), or its body stalled (`GW_BODY_PROGRESS_MS`)',
  },
  not_found: { status: 404, meaning: 'no endpoint at this path, or no such resource' },
  method_not_allowed: { status: 405, meaning: 'the path exists; the message names the methods it takes' },
  conflict: {
    status: 409,
    meaning: 'a resource of that name already exists, or a delete would leave references to nothing',
  },
  unsupported_operation: { status: 400, meaning: 'the provider does not offer this operation' },
  unknown_provider: { status: 400, meaning: 'no provider of that name exists' },
  provider_not_configured: {
    status: 400,
    meaning: 'the provider has no config or no key that may serve the model',
  },
  missing_required_header: { status: 400, meaning: 'a header of `client.required_headers` is missing' },
  unauthorized: { status: 401, meaning: 'the admin API needs a credential' },
  forbidden: { status: 403, meaning: 'the credential may not do this' },
  virtual_key_required: { status: 401, meaning: 'virtual keys are mandatory and none was sent' },
  virtual_key_invalid: { status: 401, meaning: 'no virtual key has this value' },
  virtual_key_inactive: { status: 403, meaning: 'the virtual key is deactivated' },
  virtual_key_expired: { status: 403, meaning: 'the virtual key is past its expiry' },
  provider_not_allowed: { status: 403, meaning: "the key's provider configs do not include the provider" },
  model_not_allowed: { status: 403, meaning: "the model is not in the provider config's allowed models" },
  budget_exceeded: { status: 402, meaning: 'a budget of the hierarchy is spent; `code` names its level' },
  token_limit_exceeded: {
    status: 429,
    meaning: 'a token limit is reached; `Retry-After` says when it resets',
  },
  request_limit_exceeded: {
    status: 429,
    meaning: 'a request limit is reached; `Retry-After` says when it resets',
  },
  queue_full: { status: 429, meaning: 'too many MCP tool calls are waiting' },
  guardrail_blocked: {
    status: 446,
    meaning:
      'a guardrail rule blocked the input or the output; `code` names the rule, `extra_fields.guardrails` the violations, severity and excerpts',
  },
  mcp_not_configured: { status: 400, meaning: 'MCP is not configured on this gateway' },
  mcp_tool_not_found: { status: 400, meaning: 'no MCP client offers a tool of that name' },
  mcp_tool_not_allowed: { status: 403, meaning: 'the tool is filtered out for this request or key' },
  upstream_error: {
    status: 502,
    relaysUpstreamStatus: true,
    meaning: "the provider's own error, with its status and message",
  },
  upstream_timeout: { status: 504, meaning: 'the provider did not answer in time' },
  upstream_unreachable: { status: 502, meaning: 'the provider could not be reached' },
  all_targets_failed: {
    status: 502,
    relaysUpstreamStatus: true,
    meaning: "every target and fallback failed; the last one's status",
  },
  request_dropped: {
    status: 503,
    meaning:
      "the provider's queue is full (`network_config.buffer_size`) or the request waited past its timeout",
  },
  service_unavailable: { status: 503, meaning: 'a service gw needs (Redis, a peer) is down; retry' },
  internal_error: { status: 500, meaning: "gw's own failure (logged with the request id)" },
  cancelled: { status: 499, meaning: 'the caller went away; recorded, never answered' },
} as const satisfies Record<string, { status: number; meaning: string; relaysUpstreamStatus?: true }>;

export type ErrorType = keyof typeof ERROR_CATALOG;

/**
 * The HTTP status of an error of this type. A status given by the code that raised it counts only for the
 * types that relay an upstream's answer; for every other type the catalog decides, so a stray `status:`
 * at a call site can neither change nor contradict it.
 */
function statusOf(type: ErrorType, relayed?: number): number {
  const entry: { status: number; relaysUpstreamStatus?: true } = ERROR_CATALOG[type];
  return (entry.relaysUpstreamStatus && relayed) || entry.status;
}

/** Most targets a failure lists (`attempts`), and most characters of each one's message. */
export const MAX_TARGET_ATTEMPTS = 10;
export const MAX_ATTEMPT_MESSAGE = 300;

/** One target a request tried and how it failed: what a failed request's log record lists. */
export const targetAttemptSchema = z.object({
  provider: z.string(),
  model: z.string(),
  status: z.number().int().min(100).max(599),
  type: z.string(),
  message: z.string().max(MAX_ATTEMPT_MESSAGE),
});
export type TargetAttempt = z.infer<typeof targetAttemptSchema>;

/**
 * The virtual key and the owners a request is charged to, by the authorization's field names: what an
 * authorization carries, and what a refusal names.
 */
export const ownersSchema = z.object({
  virtualKeyId: z.string().optional(),
  virtualKeyName: z.string().optional(),
  teamId: z.string().optional(),
  customerId: z.string().optional(),
  userId: z.string().optional(),
  businessUnitId: z.string().optional(),
});
type RefusedOwners = z.infer<typeof ownersSchema>;

export interface GatewayErrorOptions {
  type: ErrorType;
  /** The upstream's status, for the types that relay it; any other type has its catalog status (`statusOf`). */
  status?: number | undefined;
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
  /** More of what the caller is told, under `extra_fields` (a guardrail's violations). */
  extra?: Record<string, unknown> | undefined;
  /**
   * The targets the router tried, in order, each with its failure (the last MAX_TARGET_ATTEMPTS): for the
   * request's log record, never the caller's answer (its message already names them).
   */
  attempts?: TargetAttempt[] | undefined;
  /** Governance's refusal of a known key: whom it refused, for the request's log record, never the caller's answer. */
  owners?: RefusedOwners | undefined;
  cause?: unknown;
}

/**
 * A GatewayError as it crosses a process boundary (gRPC metadata, a failed job's text): what a receiver
 * accepts back. Anything else it receives is not one of gw's errors.
 */
const gatewayErrorWireSchema = z.object({
  type: z.enum(Object.keys(ERROR_CATALOG) as [ErrorType, ...ErrorType[]]),
  status: z.number().int().min(100).max(599).optional(),
  message: z.string(),
  code: z.string().nullable().optional(),
  param: z.string().nullable().optional(),
  provider: z.string().optional(),
  model: z.string().optional(),
  retryAfter: z.number().nonnegative().optional(),
  upstream: z.boolean().optional(),
  upstreamBody: z.unknown().optional(),
  extra: z.record(z.string(), z.unknown()).optional(),
  attempts: z.array(targetAttemptSchema).max(MAX_TARGET_ATTEMPTS).optional(),
  owners: ownersSchema.optional(),
});

/**
 * A GatewayError as JSON text for a process boundary, checked against the schema its receiver applies. An
 * upstream body that cannot be written as JSON (a cycle, a bigint) is left out rather than failing the answer.
 */
export function encodeGatewayError(error: GatewayError): string {
  const parsed = gatewayErrorWireSchema.safeParse(error.toJSON());
  // What its receiver would refuse travels as what the receiver would make of it: an internal error.
  const wire = parsed.success ? parsed.data : internalError().toJSON();
  try {
    return JSON.stringify(wire);
  } catch {
    return JSON.stringify({ ...wire, upstreamBody: undefined });
  }
}

/** The GatewayError a JSON text carries, or undefined when it carries none (malformed or foreign text). */
export function decodeGatewayError(text: string): GatewayError | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = gatewayErrorWireSchema.safeParse(value);
  return parsed.success ? new GatewayError(parsed.data) : undefined;
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
  readonly extra: Record<string, unknown> | undefined;
  readonly attempts: TargetAttempt[] | undefined;
  readonly owners: RefusedOwners | undefined;

  constructor(options: GatewayErrorOptions) {
    super(options.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.type = options.type;
    this.status = statusOf(options.type, options.status);
    this.code = options.code ?? null;
    this.param = options.param ?? null;
    this.provider = options.provider;
    this.model = options.model;
    this.retryAfter = options.retryAfter;
    this.upstream = options.upstream ?? false;
    this.upstreamBody = options.upstreamBody;
    this.extra = options.extra;
    this.attempts = options.attempts;
    this.owners = options.owners;
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
      ...(this.extra !== undefined ? { extra: this.extra } : {}),
      ...(this.attempts !== undefined ? { attempts: this.attempts } : {}),
      ...(this.owners !== undefined ? { owners: this.owners } : {}),
    };
  }

  /** A copy naming the provider and model the error happened on. */
  withTarget(provider: string, model: string): GatewayError {
    return new GatewayError({ ...this.toJSON(), provider, model, cause: this.cause });
  }
}

export function invalidRequest(message: string, param?: string): GatewayError {
  return new GatewayError({ type: 'invalid_request', message, param: param ?? null });
}

/** 404 for a path no route serves: the one not-found answer of every HTTP service. */
export function noEndpoint(method: string | undefined, path: string): GatewayError {
  return new GatewayError({ type: 'not_found', message: `no endpoint at ${method ?? 'GET'} ${path}` });
}

/** 404 for a resource that does not exist (`provider 'x'`, `virtual key 'y'`). */
export function notFound(what: string): GatewayError {
  return new GatewayError({ type: 'not_found', message: `${what} does not exist` });
}

/** 405 naming the methods the path takes: the one method-not-allowed answer of every HTTP service. */
export function methodNotAllowed(options: {
  method: string | undefined;
  path: string;
  allowed: string | readonly string[];
}): GatewayError {
  const allowed = typeof options.allowed === 'string' ? options.allowed : options.allowed.join(' or ');
  return new GatewayError({
    type: 'method_not_allowed',
    message: `${options.method} is not allowed on ${options.path}; use ${allowed}`,
  });
}

export function unsupportedOperation(provider: string, operation: string): GatewayError {
  return new GatewayError({
    type: 'unsupported_operation',
    message: `provider '${provider}' does not support the operation '${operation}'`,
    provider,
  });
}

export function internalError(message = 'internal error', cause?: unknown): GatewayError {
  return new GatewayError({ type: 'internal_error', message, cause });
}

/** 503 for a service gw needs (a peer, Redis, a runner) that is down; callers may retry after a second. */
export function serviceUnavailable(message: string, cause?: unknown): GatewayError {
  return new GatewayError({ type: 'service_unavailable', message, retryAfter: 1, cause });
}

/** 499 for a request whose caller went away: recorded in logs and metrics, never answered. */
export function requestCancelled(message = 'request cancelled by the caller'): GatewayError {
  return new GatewayError({ type: 'cancelled', message });
}

/** Any thrown value as a GatewayError; unknown errors become a 500 without leaking their text. */
export function toGatewayError(error: unknown): GatewayError {
  if (error instanceof GatewayError) return error;
  return internalError('internal error', error);
}

/** Transient upstream failures are retried; everything else fails at once. */
export function isTransient(error: GatewayError): boolean {
  if (error.type === 'upstream_unreachable' || error.type === 'upstream_timeout') return true;
  if (!error.upstream) return false;
  return error.status === 408 || error.status === 429 || error.status >= 500;
}
