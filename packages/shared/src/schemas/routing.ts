import { z } from 'zod';

/**
 * How the candidates of a model alias or a key's plan are ordered (docs/routing.md "Strategies"); each is
 * health-aware (a Failed target goes last).
 */
const ROUTING_STRATEGIES = [
  'weighted',
  'least_busy',
  'lowest_latency',
  'lowest_cost',
  'usage',
  'cache_affinity',
] as const;
export const routingStrategySchema = z.enum(ROUTING_STRATEGIES);
export type RoutingStrategy = z.infer<typeof routingStrategySchema>;

/**
 * A bound the strategy's choice must keep: the cheapest (or the strategy's best) among the candidates whose
 * recent p95 stays under it, else the fastest.
 */
export const routingObjectiveSchema = z
  .strictObject({
    max_ttft_p95_ms: z.number().int().positive().max(600_000).optional(),
    max_latency_p95_ms: z.number().int().positive().max(3_600_000).optional(),
  })
  .refine(
    (objective) => objective.max_ttft_p95_ms !== undefined || objective.max_latency_p95_ms !== undefined,
    {
      message: 'name max_ttft_p95_ms or max_latency_p95_ms',
    },
  );
export type RoutingObjective = z.infer<typeof routingObjectiveSchema>;

export const ROUTING_SCOPES = ['global', 'customer', 'team', 'virtual_key'] as const;
export type RoutingScope = (typeof ROUTING_SCOPES)[number];

const targetModelSchema = z
  .string()
  .regex(/^[^/]+\/.+$/, "must be '<provider>/<model>' (for example anthropic/claude-sonnet-4-5)");

/**
 * A routing rule (docs/routing.md "Rules"; Bifrost's field names): when `cel_expression` holds for a request
 * in its scope, the request goes to one of `targets` (by `strategy`, weighted by default), then `fallbacks`.
 * Rules of the most specific scope are evaluated first (virtual key, team, customer, global), by ascending
 * `priority` within a scope; the first match wins.
 */
const routingRuleFields = {
  name: z.string().min(1).max(200),
  description: z.string().max(2000).optional(),
  enabled: z.boolean().default(true),
  cel_expression: z.string().min(1).max(4000),
  targets: z
    .array(
      z.strictObject({
        provider: z.string().min(1).max(100),
        model: z.string().min(1).max(200),
        weight: z.number().min(0).default(1),
      }),
    )
    .min(1)
    .max(20),
  fallbacks: z.array(targetModelSchema).max(10).default([]),
  strategy: routingStrategySchema.default('weighted'),
  objective: routingObjectiveSchema.optional(),
  scope: z.enum(ROUTING_SCOPES).default('global'),
  scope_id: z.string().min(1).max(200).optional(),
  priority: z.number().int().min(0).max(1_000_000).default(0),
};

function scopeNamed(rule: { scope: RoutingScope; scope_id?: string | undefined }, context: z.RefinementCtx) {
  if (rule.scope === 'global' && rule.scope_id !== undefined) {
    context.addIssue({ code: 'custom', path: ['scope_id'], message: 'a global rule has no scope_id' });
  }
  if (rule.scope !== 'global' && rule.scope_id === undefined) {
    context.addIssue({
      code: 'custom',
      path: ['scope_id'],
      message: `is required for scope '${rule.scope}'`,
    });
  }
}

/** A rule's fields without the scope check (what a stored rule extends). */
export const routingRuleObjectSchema = z.strictObject(routingRuleFields);
export const routingRuleSchema = routingRuleObjectSchema.superRefine(scopeNamed);

/** A rule of the config file (`governance.routing_rules`), with the id it keeps in the store. */
export const configRoutingRuleSchema = z
  .strictObject({ ...routingRuleFields, id: z.string().min(1).max(200).optional() })
  .superRefine(scopeNamed);

/** Why a candidate or a rule was passed over (docs/routing.md "Explained decisions"). */
const ROUTING_SKIP_REASONS = ['boundary', 'health', 'context_window', 'limits', 'objective'] as const;

/** One candidate target of a decision: its score under the strategy (higher is better), or why it was skipped. */
export const routingCandidateSchema = z.object({
  provider: z.string(),
  model: z.string(),
  score: z.number().optional(),
  state: z.string().optional(),
  skipped: z.enum(ROUTING_SKIP_REASONS).optional(),
  detail: z.string().optional(),
});
export type RoutingCandidate = z.infer<typeof routingCandidateSchema>;

/** What routing decided for a request and why: on its log record, and what a dry run answers. */
export const routingDecisionSchema = z.object({
  rule: z.object({ id: z.string(), name: z.string(), scope: z.enum(ROUTING_SCOPES) }).nullable(),
  strategy: routingStrategySchema,
  candidates: z.array(routingCandidateSchema),
  /** Rules that matched but were not used, or failed to evaluate. */
  skipped_rules: z
    .array(
      z.object({
        id: z.string(),
        name: z.string(),
        reason: z.enum(['error', 'boundary']),
        error: z.string().optional(),
      }),
    )
    .default([]),
});
export type RoutingDecision = z.infer<typeof routingDecisionSchema>;
