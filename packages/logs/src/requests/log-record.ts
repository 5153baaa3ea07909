import { type RoutingCandidate, type RoutingDecision, routingDecisionSchema } from '@gw/shared';
import { z } from 'zod';

/** How the cache answered a request: served from it, looked up and missed, or not consulted. */
export const CACHE_OUTCOMES = ['hit', 'miss', 'bypass'] as const;

/** What the guardrails did: nothing to say, flagged but let through, content redacted, request refused. */
export const GUARDRAIL_OUTCOMES = ['passed', 'flagged', 'redacted', 'blocked'] as const;

/** A name gw itself chooses (a provider, a surface, an error type): short, never free text. */
const label = z.string().min(1).max(128);
/** The longest identifier or name a record holds. */
export const MAX_NAME = 512;
/** An identifier or name that comes from configuration (a key, a team, a model). */
const name = z.string().min(1).max(MAX_NAME);
const tokens = z.number().int().nonnegative().default(0);

/** Most targets a record lists, and most characters of each one's error message. */
const MAX_ATTEMPTS = 10;
const MAX_ATTEMPT_MESSAGE = 300;
/** Most characters kept of a failed request's error message and of its upstream's error body. */
export const MAX_ERROR_TEXT = 1_000;

/** A target a failed request tried, and how it failed. */
const attemptSchema = z.object({
  provider: label,
  model: name.nullable(),
  /** The status the target answered (or gw made of its failure: 504 for a timeout). */
  status: z.number().int().min(100).max(599).nullable(),
  error_type: label.nullable(),
  /** The failure's message, secrets taken out, cut to its bound. */
  message: z.string().max(MAX_ATTEMPT_MESSAGE),
});

/** Stores keep the list as JSON text; read back, it is parsed here (text that is no JSON fails the schema). */
function fromJsonText(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

const usd = z.number().nonnegative();

/**
 * What a request's cost was billed for, in US dollars (governance's settle answers it): uncached input, input
 * read from and written to the prompt cache, output, audio and image tokens in and out, and what is priced per
 * call or unit (when the call had any) sum to the record's `cost`; `reasoning` is the part of `output` the model
 * spent reasoning, shown apart, not added.
 */
const costBreakdownSchema = z.object({
  input: usd,
  cached_input: usd,
  cache_write: usd,
  output: usd,
  reasoning: usd,
  audio: usd.optional(),
  image: usd.optional(),
  per_unit: usd.optional(),
});

/**
 * What a record keeps of its routing decision: the first candidates (a rule's 20 targets and 10 fallbacks), the
 * first skipped rules, and each detail or error cut to a line, so that a decision cannot grow a record.
 */
export const ROUTING_LIMITS = { candidates: 30, skippedRules: 10, text: 500 } as const;

const cut = (text: string, max: number): string => (text.length > max ? text.slice(0, max) : text);

/**
 * A decision within ROUTING_LIMITS, names cut to MAX_NAME, and only finite scores kept (JSON has no Infinity: one
 * would come back as null and fail the schema): the decision itself when it is within them already (nearly every
 * one: a request's record is written once a request, and the copy was most of the log's work on it), else a copy;
 * the router's object is never changed.
 */
export function boundRoutingDecision(decision: RoutingDecision): RoutingDecision {
  return withinRoutingLimits(decision) ? decision : boundCopy(decision);
}

const fits = (text: string | undefined, max: number) => text === undefined || text.length <= max;

function withinRoutingLimits({ rule, candidates, skipped_rules: skippedRules }: RoutingDecision): boolean {
  if (candidates.length > ROUTING_LIMITS.candidates || skippedRules.length > ROUTING_LIMITS.skippedRules)
    return false;
  if (rule && !(fits(rule.id, MAX_NAME) && fits(rule.name, MAX_NAME))) return false;
  for (const { provider, model, score, state, detail } of candidates) {
    if (!(fits(provider, MAX_NAME) && fits(model, MAX_NAME) && fits(state, MAX_NAME))) return false;
    if (!fits(detail, ROUTING_LIMITS.text) || (score !== undefined && !Number.isFinite(score))) return false;
  }
  for (const { id, name, error } of skippedRules) {
    if (!(fits(id, MAX_NAME) && fits(name, MAX_NAME) && fits(error, ROUTING_LIMITS.text))) return false;
  }
  return true;
}

function boundCopy(decision: RoutingDecision): RoutingDecision {
  const { rule, candidates, skipped_rules: skippedRules } = decision;
  return {
    rule: rule && { id: cut(rule.id, MAX_NAME), name: cut(rule.name, MAX_NAME), scope: rule.scope },
    strategy: decision.strategy,
    candidates: candidates.slice(0, ROUTING_LIMITS.candidates).map(boundCandidate),
    skipped_rules: skippedRules.slice(0, ROUTING_LIMITS.skippedRules).map(({ id, name, reason, error }) => ({
      id: cut(id, MAX_NAME),
      name: cut(name, MAX_NAME),
      reason,
      ...(error !== undefined && { error: cut(error, ROUTING_LIMITS.text) }),
    })),
  };
}

function boundCandidate({
  provider,
  model,
  score,
  state,
  skipped,
  detail,
}: RoutingCandidate): RoutingCandidate {
  return {
    provider: cut(provider, MAX_NAME),
    model: cut(model, MAX_NAME),
    ...(score !== undefined && Number.isFinite(score) && { score }),
    ...(state !== undefined && { state: cut(state, MAX_NAME) }),
    ...(skipped !== undefined && { skipped }),
    ...(detail !== undefined && { detail: cut(detail, ROUTING_LIMITS.text) }),
  };
}

/** A stored decision is JSON text, and a record without one holds null there: read back, it is absent. */
function fromStoredDecision(value: unknown): unknown {
  return value === null ? undefined : fromJsonText(value);
}

/**
 * One request as the log keeps it. Field names are the JSON names `/api/logs` answers with. A value the
 * request never reached (no provider for a refused request, no first token for a whole answer) is null;
 * counters and cost are 0 then, so sums and sorts need no null handling. Unknown fields are dropped, not refused:
 * a record written by a newer gateway still reaches an older log worker.
 */
export const logRecordSchema = z.object({
  /** The request id the gateway gave the request (`x-request-id`). */
  id: z.string().min(1).max(128),
  /** When the request arrived, epoch milliseconds. */
  time: z.number().int().nonnegative(),
  /** The API family the caller spoke: `openai`, `anthropic`, `genai`, `bedrock`, `litellm`… */
  surface: label,
  /** The route's path as the route map names it (`/v1/chat/completions`). */
  route: z.string().min(1).max(512),
  /** The provider that answered, or the last one tried. */
  provider: label.nullable().default(null),
  /** The upstream model that answered. */
  model: name.nullable().default(null),
  /** The model or alias the caller asked for, before routing resolved it. */
  requested_model: name.nullable().default(null),
  /** The HTTP status the caller got (499 when the caller went away). */
  status: z.number().int().min(100).max(599),
  /** The gateway error type (`upstream_error`, `budget_exceeded`…) of a failed request. */
  error_type: label.nullable().default(null),
  /** The error message the caller got, cut to its bound. */
  error_message: z.string().max(MAX_ERROR_TEXT).nullable().default(null),
  /** The status the upstream answered when the failure was its answer (null when gw refused or none answered). */
  upstream_status: z.number().int().min(100).max(599).nullable().default(null),
  /** The start of the upstream's error body (secrets taken out, as the caller got it), cut to its bound. */
  upstream_body: z.string().max(MAX_ERROR_TEXT).nullable().default(null),
  /** From arrival to the last byte sent, milliseconds. */
  latency_ms: z.number().nonnegative(),
  /** From arrival to the first streamed token, milliseconds; null for a whole answer. */
  time_to_first_token_ms: z.number().nonnegative().nullable().default(null),
  input_tokens: tokens,
  output_tokens: tokens,
  /** Input tokens served from the provider's prompt cache (part of input_tokens). */
  cached_tokens: tokens,
  /** Output tokens spent on reasoning (part of output_tokens). */
  reasoning_tokens: tokens,
  /** What the request cost, in US dollars; 0 when the price is unknown. */
  cost: z.number().nonnegative().default(0),
  /** What `cost` was billed for; null when governance charged nothing for the request (no key, no settle). */
  cost_breakdown: z.preprocess(fromJsonText, costBreakdownSchema.nullable().default(null)),
  virtual_key_id: name.nullable().default(null),
  virtual_key_name: name.nullable().default(null),
  /**
   * The key's owners that governance charged (its hierarchy): a team's customer and business unit are the
   * request's even when the key names none of its own.
   */
  team_id: name.nullable().default(null),
  customer_id: name.nullable().default(null),
  user_id: name.nullable().default(null),
  business_unit_id: name.nullable().default(null),
  /** The id of the provider key the router chose. */
  selected_key_id: name.nullable().default(null),
  /**
   * The targets that failed, in order (the last ten), each with its error: for a failed request every target it
   * tried, for a served one those that failed before the one that served (a fallback saved it). Null when no
   * target failed.
   */
  attempts: z.preprocess(fromJsonText, z.array(attemptSchema).max(MAX_ATTEMPTS).nullable().default(null)),
  /** Which target of the fallback chain answered: 0 the first; null when none was tried. */
  fallback_index: z.number().int().min(0).max(1_000).nullable().default(null),
  /**
   * What routing decided and why (the rule that matched, the strategy, each candidate's score or why it was
   * skipped), cut to ROUTING_LIMITS. Absent when routing made no decision: a pass-through, an MCP call, a
   * request refused before routing. Null is taken for absent.
   */
  routing: z.preprocess(fromStoredDecision, routingDecisionSchema.transform(boundRoutingDecision).optional()),
  cache_outcome: z.enum(CACHE_OUTCOMES).nullable().default(null),
  guardrail_outcome: z.enum(GUARDRAIL_OUTCOMES).nullable().default(null),
  /** The request body as received, truncated by the writer; null when content logging is off. */
  request_content: z.string().nullable().default(null),
  /** The answer as sent (a stream's text joined), truncated by the writer; null when off. */
  response_content: z.string().nullable().default(null),
  /** Whether the writer cut either content to its configured size. */
  content_truncated: z.boolean().default(false),
  /** The W3C trace id of the request's trace, to jump from a log line to its spans. */
  trace_id: z.string().min(1).max(64).nullable().default(null),
});

/** A stored record: every field present. */
export type LogRecord = z.output<typeof logRecordSchema>;
/** What a caller builds: the nullable fields, counters and cost may be left out. */
export type LogRecordInput = z.input<typeof logRecordSchema>;

/** The column names, in one order, for the stores' SQL. */
export const LOG_RECORD_FIELDS = Object.keys(logRecordSchema.shape) as Array<keyof LogRecord>;
