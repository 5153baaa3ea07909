import type { AuthorizeResult, SettleResult } from '@gw/governance';
import type { GuardrailOutcome } from '@gw/guardrails';
import { type DroppedTally, type LogRecord, MAX_ERROR_TEXT, MAX_NAME } from '@gw/logs';
import type { ServedBy } from '@gw/router';
import {
  type GatewayError,
  type Live,
  type LogsConfig,
  MAX_ATTEMPT_MESSAGE,
  type TargetAttempt,
  type Usage,
} from '@gw/shared';

/**
 * What the pipeline learns of one request for its log record: the record stage and settle fill it, the
 * ingress turns it into the record when the answer is over (docs/logs.md). Present only while logs are on.
 */
export interface RequestLogDraft {
  /** The model or alias the caller named, before aliases and routing. */
  requestedModel?: string;
  authorization?: AuthorizeResult;
  provider?: string;
  model?: string;
  usage?: Usage;
  servedBy?: ServedBy | undefined;
  /** A failed request: the targets it tried and their errors (the router's list, bounded); a served one's are in servedBy. */
  attempts?: LogRecord['attempts'];
  /** A failed request: what the caller was told, and what the upstream answered when it was the upstream's. */
  error?: Pick<LogRecord, 'error_message' | 'upstream_status' | 'upstream_body'>;
  /** A refusal of a known key: the key and owners it was refused for (no authorization was made). */
  owners?: GatewayError['owners'];
  /** performance.now() at the first streamed item. */
  firstItemAt?: number;
  cache?: 'hit' | 'miss' | 'bypass';
  guardrail?: GuardrailOutcome | undefined;
  /** An async guardrail rule flagged the request (its finding may come after the record was written). */
  asyncFlagged?: boolean;
  /** Set once the record left for the writer: a later async finding amends the written record. */
  amend?: () => void;
  /** What governance charged and what for, once its settle answers (undefined: not known). */
  charge?: Promise<SettleResult | undefined>;
  /** Kept only when content logging is on for the request. */
  requestContent?: string;
  responseContent?: string;
  traceId?: string;
}

/**
 * A failed request's record: the message the caller got, the upstream's status and body excerpt when the
 * failure was the upstream's answer, the key and owners a refusal names, the targets tried, and the target that
 * failed last (the router's error carries it), unless the draft knows what served it already (a stream that
 * failed late).
 */
export function noteFailedTarget(draft: RequestLogDraft | undefined, failure: GatewayError): void {
  if (!draft) return;
  // The upstream's answer (a relayed status, or the last target's body behind all_targets_failed).
  const upstream = failure.upstream || failure.upstreamBody !== undefined;
  draft.error = {
    error_message: failure.message.slice(0, MAX_ERROR_TEXT),
    upstream_status: upstream ? failure.status : null,
    upstream_body: upstream ? excerpt(failure.upstreamBody) : null,
  };
  draft.owners = failure.owners;
  // The router's list of what it tried; a refusal that names a provider (model_not_allowed) tried none.
  if (failure.attempts) draft.attempts = attemptRows(failure.attempts);
  if (draft.provider || !failure.provider) return;
  draft.provider = failure.provider;
  if (failure.model) draft.model = failure.model;
}

/** The targets a request tried and how each failed, as the record keeps them (bounded). */
function attemptRows(attempts: readonly TargetAttempt[]): NonNullable<LogRecord['attempts']> {
  return attempts.map((attempt) => ({
    provider: attempt.provider.slice(0, 128),
    model: attempt.model.slice(0, MAX_NAME) || null,
    status: attempt.status,
    error_type: attempt.type.slice(0, 128),
    message: attempt.message.slice(0, MAX_ATTEMPT_MESSAGE),
  }));
}

/**
 * Every target tried: a failure's list, or for a served request those that failed before the one that served
 * (a fallback that saved it); null when nothing failed.
 */
function attemptsOf(draft: RequestLogDraft): LogRecord['attempts'] {
  if (draft.attempts) return draft.attempts;
  const failedBefore = draft.servedBy?.failedBefore;
  return failedBefore?.length ? attemptRows(failedBefore) : null;
}

/** The start of an upstream's error body as text (JSON as written), or null without one. */
function excerpt(body: unknown): string | null {
  if (body === undefined || body === null || body === '') return null;
  let text: string;
  try {
    text = typeof body === 'string' ? body : JSON.stringify(body);
  } catch {
    return null;
  }
  return text.slice(0, MAX_ERROR_TEXT);
}

/**
 * An async guardrail rule flagged the request: the record says `flagged` (unless it says more), whether it
 * is still a draft, waits for its cost, or was written already (then the store's copy is amended).
 */
export function noteAsyncFinding(draft: RequestLogDraft | undefined): void {
  if (!draft || draft.asyncFlagged) return;
  draft.asyncFlagged = true;
  draft.amend?.();
}

/** What a request's record takes besides its draft (the ingress's RequestContext carries it). */
export interface LoggedRequest {
  requestId: string;
  /** The route's pattern: the record's `route`, and its surface. */
  route: string;
  /** performance.now() when the request came in. */
  startedAt: number;
  /** The provider that served, when the draft does not name one. */
  provider: string;
  log?: RequestLogDraft | undefined;
}

/** Where records go: the LogWriter (synchronous, never throws). */
export interface RecordSink {
  enqueueRecord(record: LogRecord, options: { content: boolean; contentMaxBytes: number }): boolean;
  /** A record enqueued earlier was flagged by an async guardrail rule. */
  flagGuardrail(id: string): void;
}

/** A route's template as the surface it belongs to (`/anthropic/*` → anthropic; gw's native paths → openai). */
const SURFACES: ReadonlyArray<readonly [prefix: string, surface: string]> = [
  ['/anthropic', 'anthropic'],
  ['/bedrock', 'bedrock'],
  ['/genai', 'genai'],
  ['/litellm', 'litellm'],
  ['/v1/mcp', 'mcp'],
];

function surfaceOf(route: string): string {
  for (const [prefix, surface] of SURFACES) if (route.startsWith(prefix)) return surface;
  return 'openai';
}

function guardrailOutcome(draft: RequestLogDraft, errorType: string | null) {
  const outcome = draft.guardrail;
  if (errorType === 'guardrail_blocked' || outcome?.outcome === 'blocked') return 'blocked' as const;
  if (outcome && (outcome.modifications.length > 0 || Object.keys(outcome.redactions).length > 0))
    return 'redacted' as const;
  if (draft.asyncFlagged || outcome?.outcome === 'warning') return 'flagged' as const;
  return outcome ? ('passed' as const) : null;
}

/** The trace id of a W3C `traceparent` (`00-<trace id>-<span id>-<flags>`). */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  return traceparent?.slice(3, 35) || undefined;
}

/**
 * The request log of an ingress: a draft per request while `logs.enabled`, turned into one record when the
 * answer is over (a stream when it ends, also when the caller hung up). Nothing here awaits: a record whose
 * cost governance has yet to answer is enqueued when it does, off the request's path.
 */
export function createRequestLog(options: {
  sink: RecordSink;
  /** The `logs` settings, followed live: each request reads the ones in force. */
  config: Live<LogsConfig>;
  /** The process's dropped counts: requests refused for overload are counted here, logs on or off. */
  tally?: DroppedTally | undefined;
}) {
  const { sink, tally } = options;
  const config = () => options.config.current();
  const surfaces = new Map<string, string>();

  function enqueue(draft: RequestLogDraft, record: LogRecord, content: boolean): void {
    // A finding that came while the record waited for its cost is in it; a later one amends what was written.
    if (draft.asyncFlagged && (record.guardrail_outcome === null || record.guardrail_outcome === 'passed'))
      record.guardrail_outcome = 'flagged';
    if (!sink.enqueueRecord(record, { content, contentMaxBytes: config().content_max_bytes })) return;
    draft.amend = () => sink.flagGuardrail(record.id);
  }

  return {
    /** Most UTF-8 bytes kept of each content (the live setting). */
    get contentMaxBytes(): number {
      return config().content_max_bytes;
    },

    /** A request refused for overload (`request_dropped`), under the reason its error code names. */
    dropped(code: string | null): void {
      tally?.add(code ?? 'request_dropped');
    },

    /** A draft for a request, or undefined while logs are off (the request then costs nothing more). */
    start(): RequestLogDraft | undefined {
      return config().enabled ? {} : undefined;
    },

    /** Whether this request's content is kept: on globally, and not refused by its virtual key. */
    keepsContent(authorization: AuthorizeResult | undefined): boolean {
      return config().content && authorization?.logContent !== false;
    },

    /** The answer is over: its record, with the status the caller got. */
    finish(context: LoggedRequest, status: number, errorType: string | null): void {
      const draft = context.log;
      if (!draft) return;
      const now = performance.now();
      const latencyMs = now - context.startedAt;
      let surface = surfaces.get(context.route);
      if (surface === undefined) {
        surface = surfaceOf(context.route);
        surfaces.set(context.route, surface);
      }
      // A refused request has no authorization: its owners are the refusal's.
      const authorization = draft.authorization ?? draft.owners;
      const usage = draft.usage;
      // Every field, from typed values: the writer takes it without a schema pass (enqueueRecord).
      const record: LogRecord = {
        id: context.requestId,
        time: Math.round(Date.now() - latencyMs),
        surface,
        route: context.route,
        provider: draft.provider || context.provider || null,
        model: draft.model || null,
        requested_model: draft.requestedModel || null,
        status,
        error_type: errorType,
        error_message: draft.error?.error_message ?? null,
        upstream_status: draft.error?.upstream_status ?? null,
        upstream_body: draft.error?.upstream_body ?? null,
        latency_ms: latencyMs,
        time_to_first_token_ms:
          draft.firstItemAt === undefined ? null : draft.firstItemAt - context.startedAt,
        input_tokens: usage?.prompt_tokens ?? 0,
        output_tokens: usage?.completion_tokens ?? 0,
        cached_tokens: usage?.prompt_tokens_details?.cached_tokens ?? 0,
        reasoning_tokens: usage?.completion_tokens_details?.reasoning_tokens ?? 0,
        cost: 0,
        cost_breakdown: null,
        virtual_key_id: authorization?.virtualKeyId ?? null,
        virtual_key_name: authorization?.virtualKeyName ?? null,
        team_id: authorization?.teamId ?? null,
        customer_id: authorization?.customerId ?? null,
        user_id: authorization?.userId ?? null,
        business_unit_id: authorization?.businessUnitId ?? null,
        selected_key_id: draft.servedBy?.keyId ?? null,
        attempts: attemptsOf(draft),
        fallback_index: draft.servedBy?.fallbackIndex ?? null,
        // Where routing sent it and why (docs/routing.md "Explained decisions"); the writer bounds its size.
        ...(draft.authorization?.routing && { routing: draft.authorization.routing }),
        cache_outcome: draft.cache ?? null,
        guardrail_outcome: guardrailOutcome(draft, errorType),
        request_content: draft.requestContent ?? null,
        response_content: draft.responseContent ?? null,
        content_truncated: false,
        trace_id: draft.traceId ?? null,
      };
      const content = draft.requestContent !== undefined || draft.responseContent !== undefined;
      if (!draft.charge) {
        enqueue(draft, record, content);
        return;
      }
      draft.charge.then((charge) => {
        record.cost = charge?.cost ?? 0;
        if (charge?.cost_breakdown) record.cost_breakdown = charge.cost_breakdown;
        enqueue(draft, record, content);
      });
    },
  };
}

export type RequestLog = ReturnType<typeof createRequestLog>;
