import { ownersSchema, routingDecisionSchema } from '@gw/shared';
import { z } from 'zod';

/**
 * The messages of GovernanceService as zod schemas: the types below are inferred from them, and the gRPC
 * server and client validate what they decode against them (a forged or broken message never reaches the
 * core, and a settle can never carry negative usage).
 */
const count = z.number().int().nonnegative();

const usageSchema = z.looseObject({
  prompt_tokens: count,
  completion_tokens: count,
  total_tokens: count,
  prompt_tokens_details: z
    .looseObject({
      cached_tokens: count.optional(),
      cache_write_tokens: count.optional(),
      cache_write_1h_tokens: count.optional(),
      audio_tokens: count.optional(),
      image_tokens: count.optional(),
    })
    .optional(),
  completion_tokens_details: z
    .looseObject({
      reasoning_tokens: count.optional(),
      audio_tokens: count.optional(),
      image_tokens: count.optional(),
    })
    .optional(),
  // Seconds of audio are not whole.
  units: z
    .looseObject({
      images: count.optional(),
      audio_seconds: z.number().nonnegative().optional(),
      characters: count.optional(),
    })
    .optional(),
  /** A batch's usage: its id (charged once) and the model whose batch prices it is charged at. */
  batch: z
    .looseObject({ id: z.string().min(1).max(256), model: z.string().min(1).max(256).optional() })
    .optional(),
});

export const planTargetSchema = z.object({
  /** Empty when the request named a bare model: governance picks providers from the virtual key. */
  provider: z.string(),
  model: z.string(),
  keyIds: z.array(z.string()).optional(),
  /**
   * cache_affinity (docs/routing.md): a hash of the conversation's prefix; the router picks the target's
   * provider key by it (rendezvous hashing), so one conversation meets the same provider prompt cache.
   */
  affinity: z.string().max(128).optional(),
});

/** What ingress knows of a request before anything is routed. */
export const authorizeRequestSchema = z.object({
  requestId: z.string().min(1),
  /**
   * `llm` for completions; `mcp` for tool execution and `meta` for calls that reach no model (token counts):
   * these two check required headers and the key's status only.
   */
  kind: z.enum(['llm', 'mcp', 'meta']),
  /** The `sk-gw-…` value from any of the five headers, when one was sent. */
  virtualKey: z.string().optional(),
  /** Lowercased names of the request's headers (values are not needed to check required headers). */
  headerNames: z.array(z.string()),
  /** The requested target, then the request's fallbacks. */
  targets: z.array(planTargetSchema),
  /** For budget reservations: an estimate of the prompt's tokens and the most the answer may use. */
  estimate: z
    .object({
      promptTokens: count,
      maxCompletionTokens: count.optional(),
      /** Answers asked for (`n`): the completion tokens of each are paid for. */
      choices: count.optional(),
    })
    .optional(),
  /**
   * What routing rules read of a completion or embeddings request (docs/routing.md "Variables"); absent for
   * calls no rule routes (pass-through, MCP, token counts).
   */
  routing: z
    .object({
      requestType: z.enum(['chat', 'text', 'embeddings']),
      stream: z.boolean(),
      /** Lowercased names; the caller's credentials are left out. */
      headers: z.record(z.string(), z.string()),
      params: z.record(z.string(), z.unknown()),
      /** A hash of the conversation's prefix (system prompt and first user message), for cache_affinity. */
      affinity: z.string().max(128).optional(),
      /** Tokens of the prompt before its last message (lowest_cost prices them as cached input). */
      prefixTokens: count.optional(),
    })
    .optional(),
});

/** A counter charged at settlement, with what authorize already added to it. */
export const settlementCounterSchema = z.object({
  key: z.string().min(1),
  /** Whose counter it is in the store (`key:<id>`, `team:<id>`…: its slot on Redis). */
  owner: z.string().min(1).optional(),
  kind: z.enum(['budget', 'tokens']),
  reserved: z.number().nonnegative(),
  expireAtMs: z.number(),
});

/** Everything Settle needs, returned by Authorize and handed back unchanged (also kept as the reservation). */
export const settlementPlanSchema = z.object({
  reservationId: z.string().min(1),
  virtualKeyId: z.string().min(1),
  /** Counters of the key and its owners, charged whatever provider serves. */
  counters: z.array(settlementCounterSchema),
  /** Counters of each provider config, charged only for the provider that served. */
  providerCounters: z.record(z.string(), z.array(settlementCounterSchema)),
  /** Providers of the plan's targets, in order (the store reports the admitted one by index). */
  alternativeProviders: z.array(z.string()),
  /** The provider config whose counters received the reserved amounts at admission. */
  reservedProvider: z.string().optional(),
  /** Charged by the sweeper when no Settle arrives in time. */
  estimate: z.object({ model: z.string(), provider: z.string(), usage: usageSchema }),
  /** When the sweeper takes over (epoch ms): a settle is worth retrying until then. */
  deadlineMs: z.number().optional(),
});

/** An allowed request: the routing plan and what Settle needs later. */
export const authorizeResultSchema = z.object({
  targets: z.array(planTargetSchema),
  /**
   * The key, and its owners that governance charges (its hierarchy: a team's customer and business unit when
   * the key names none), for guardrail conditions (`team`, `customer`, `user`) and the request log.
   */
  ...ownersSchema.shape,
  /** False when the key keeps no content in request logs (`log_content: false`). */
  logContent: z.boolean().optional(),
  /** The key's MCP tool policy (`[]` when it names none), so MCP filtering needs no second call. */
  mcpTools: z.array(z.object({ client: z.string(), tools: z.array(z.string()) })).optional(),
  settlement: settlementPlanSchema.optional(),
  /**
   * Strict budgets: the max_tokens (per choice) a request that set none must be sent with, because the
   * budget left buys no more.
   */
  maxCompletionTokens: count.optional(),
  /** Why the plan is what it is: the routing rule that matched, the strategy, the candidates (docs/routing.md). */
  routing: routingDecisionSchema.optional(),
});

/** A call made for a request besides its answer (the response cache's embedding): charged with it. */
const sideCallSchema = z.object({ provider: z.string(), model: z.string(), usage: usageSchema });

export const settleRequestSchema = z.object({
  requestId: z.string().min(1),
  settlement: settlementPlanSchema,
  provider: z.string(),
  model: z.string(),
  usage: usageSchema,
  /** Further calls the request made (bounded: a stage makes a few at most), charged once with it. */
  calls: z.array(sideCallSchema).max(64).optional(),
});

const usd = z.number().nonnegative();

/**
 * What a charge was billed for, in US dollars: uncached input, input read from and written to the prompt cache,
 * output, audio and image tokens in and out and what is priced per call and unit (each present when the call was
 * charged for it), which sum to the charge; `reasoning` is the part of `output` spent reasoning (not added to it).
 */
export const costBreakdownSchema = z.object({
  input: usd,
  cached_input: usd,
  cache_write: usd,
  output: usd,
  reasoning: usd,
  audio: usd.optional(),
  /** Image tokens in and out, at their own prices. */
  image: usd.optional(),
  /** Per call and per unit (images made, audio seconds, characters): `ModelPrice.per_*`. */
  per_unit: usd.optional(),
});

/**
 * What a settle charged: the US dollars of the answer and its side calls (the request log's `cost`), and what
 * they were billed for (its `cost_breakdown`; absent from a governance from before it was answered).
 */
export const settleResultSchema = z.object({ cost: usd, cost_breakdown: costBreakdownSchema.optional() });

/**
 * A collection of the admin API (`/api/governance/{collection}`) as its path names it: a name that is no
 * collection is not_found, like any unknown path, so it is checked by the core and not here.
 */
const collection = z.string().min(1);
const id = z.string().min(1);

/** Management of governance resources (the admin API): one request shape per action. */
export const manageRequestSchema = z.discriminatedUnion('action', [
  z.object({ action: z.literal('list'), collection }),
  z.object({ action: z.literal('get'), collection, id }),
  // `body` is checked against the collection's own schema by the core, whose errors name the field.
  z.object({ action: z.literal('create'), collection, body: z.unknown() }),
  // PUT: the whole resource; the core refuses a body without a required part, naming it.
  z.object({ action: z.literal('update'), collection, id, body: z.unknown() }),
  // PATCH: a JSON merge patch (RFC 7396), which must be an object (another value would replace the resource).
  z.object({ action: z.literal('patch'), collection, id, body: z.record(z.string(), z.unknown()) }),
  // `cascade`: detach what still refers to the resource instead of refusing (409) the delete.
  z.object({ action: z.literal('delete'), collection, id, cascade: z.boolean().optional() }),
  z.object({ action: z.literal('rotate'), collection, id }),
  z.object({ action: z.literal('usage'), collection, id }),
  // Routing rules: where a described request would go, and why, without admitting or calling anything.
  z.object({ action: z.literal('dry-run'), collection, body: z.unknown() }),
]);

/** A dry run's request (docs/routing.md "Dry run"): what a request would carry that routing reads. */
export const dryRunRequestSchema = z.strictObject({
  /** `<provider>/<model>`, a bare model (with a virtual key) or an alias. */
  model: z.string().min(1).max(300),
  virtual_key_id: z.string().min(1).max(200).optional(),
  request_type: z.enum(['chat', 'text', 'embeddings']).default('chat'),
  stream: z.boolean().default(false),
  headers: z.record(z.string().max(200), z.string().max(8_000)).default({}),
  params: z.record(z.string(), z.unknown()).default({}),
  messages: z
    .array(z.looseObject({ role: z.string(), content: z.unknown() }))
    .max(1_000)
    .default([]),
  /** The prompt's tokens; by default gw's rule of thumb over the messages' texts (four characters a token). */
  tokens: count.max(100_000_000).optional(),
});
export type DryRunRequest = z.infer<typeof dryRunRequestSchema>;

/** A resource as the admin API shows it (never a key's hash); its other fields are its collection's. */
const resourceViewSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});

const budgetUsageSchema = z.object({
  kind: z.literal('budget'),
  budget_id: z.string(),
  max_limit: z.number(),
  reset_duration: z.string(),
  /** US dollars spent in the current period. */
  used: z.number(),
  remaining: z.number(),
  resets_at: z.string(),
});

const limitUsageSchema = z.object({
  kind: z.enum(['requests', 'tokens']),
  limit: z.number(),
  used: z.number(),
  remaining: z.number(),
  resets_at: z.string(),
});

/** `GET …/{id}/usage`: every budget and limit of a resource, then of each provider config of a key. */
const usageReportSchema = z.object({
  id: z.string(),
  usage: z.array(
    z.object({
      /** The resource's level (`virtual_key`, `team`…) or `provider_config:<provider>`. */
      scope: z.string(),
      entries: z.array(z.discriminatedUnion('kind', [budgetUsageSchema, limitUsageSchema])),
    }),
  ),
});

/** A delete's answer; `detached` lists the resources whose reference to it a cascade removed. */
const deleteResultSchema = z.object({
  deleted: z.string(),
  detached: z.array(z.object({ collection: z.string(), id: z.string(), field: z.string() })).optional(),
});

/** What each action answers; a virtual key's value is in its create and rotate answers only. */
export const manageResultSchemas = {
  list: z.array(resourceViewSchema),
  get: resourceViewSchema,
  create: resourceViewSchema.extend({ value: z.string().optional() }),
  update: resourceViewSchema,
  patch: resourceViewSchema,
  delete: deleteResultSchema,
  rotate: resourceViewSchema.extend({ value: z.string() }),
  usage: usageReportSchema,
  'dry-run': z.object({ decision: routingDecisionSchema, targets: z.array(planTargetSchema) }),
} satisfies Record<ManageAction, z.ZodType>;

export type PlanTarget = z.infer<typeof planTargetSchema>;
export type AuthorizeRequest = z.infer<typeof authorizeRequestSchema>;
export type SettlementCounter = z.infer<typeof settlementCounterSchema>;
export type SettlementPlan = z.infer<typeof settlementPlanSchema>;
export type AuthorizeResult = z.infer<typeof authorizeResultSchema>;
export type SettleRequest = z.infer<typeof settleRequestSchema>;
export type SettleResult = z.infer<typeof settleResultSchema>;
export type CostBreakdown = z.infer<typeof costBreakdownSchema>;
export type SideCall = z.infer<typeof sideCallSchema>;
export type ManageRequest = z.infer<typeof manageRequestSchema>;
export type ManageAction = ManageRequest['action'];
/** The answer of each management action. */
export type ManageResults = { [Action in ManageAction]: z.infer<(typeof manageResultSchemas)[Action]> };
export type ManageResult = ManageResults[ManageAction];
export type ResourceView = z.infer<typeof resourceViewSchema>;
export type DeleteResult = z.infer<typeof deleteResultSchema>;
export type UsageReport = z.infer<typeof usageReportSchema>;
