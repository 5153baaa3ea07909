import { z } from 'zod';
import { routingObjectiveSchema, routingStrategySchema } from './routing.ts';

/** Reset durations: `<n><unit>` with unit m(inute) h d w M(onth) Q(uarter) Y(ear). */
const durationSchema = z
  .string()
  .regex(/^[1-9][0-9]{0,3}[mhdwMQY]$/, 'must be a number followed by one of m, h, d, w, M, Q, Y (e.g. 1M)');

/**
 * The largest counter limit: counters are integers (micro-dollars for budgets, tokens, requests) added by
 * INCRBY and compared in Lua, whose numbers are doubles, exact up to 2^53 (≈ 9.007e15). A limit of 1e15 leaves
 * room for what is counted past it (the last admitted request, reservations) to stay exact. Past it admission
 * could not compare exactly, and a request of that key would fail with 500: a 400 naming the field instead.
 */
const MAX_COUNTER_LIMIT = 1e15;
/** The largest budget in USD: MAX_COUNTER_LIMIT micro-dollars ($1,000,000,000). */
const MAX_BUDGET_USD = MAX_COUNTER_LIMIT / 1_000_000;

const counterLimit = z
  .number()
  .int()
  .positive()
  .max(MAX_COUNTER_LIMIT, `must be at most ${MAX_COUNTER_LIMIT} (counters are exact integers up to 2^53)`);

export const budgetSchema = z.strictObject({
  id: z.string().optional(),
  max_limit: z
    .number()
    .nonnegative()
    .max(
      MAX_BUDGET_USD,
      `must be at most ${MAX_BUDGET_USD} USD (budgets are counted in integer micro-dollars, exact up to 2^53)`,
    ),
  reset_duration: durationSchema,
  /** Align resets to UTC calendar boundaries (start of day, week, month…). */
  calendar_aligned: z.boolean().default(false),
});

const rateLimitSchema = z.strictObject({
  token_max_limit: counterLimit.optional(),
  token_reset_duration: z.enum(['1m', '1h', '1d']).optional(),
  request_max_limit: counterLimit.optional(),
  request_reset_duration: z.enum(['1m', '1h', '1d']).optional(),
});

export const virtualKeyProviderConfigSchema = z.strictObject({
  provider: z.string().min(1),
  weight: z.number().min(0).default(1),
  /** `["*"]` allows every model; an empty list allows none. */
  allowed_models: z.array(z.string()).default(['*']),
  key_ids: z.array(z.string()).default(['*']),
  budgets: z.array(budgetSchema).optional(),
  budget: budgetSchema.optional(),
  rate_limit: rateLimitSchema.optional(),
});

const mcpToolPolicySchema = z.strictObject({
  client: z.string().min(1),
  /** Tool names, `["*"]` for all, `[]` for none. */
  tools: z.array(z.string()),
});

const aliasTargetModelSchema = z
  .string()
  .regex(/^[^/]+\/.+$/, "must be '<provider>/<model>' (for example anthropic/claude-sonnet-4-5)");

/**
 * A model name callers use, mapped to the models that serve it (docs/governance.md "Model aliases"): `name` is exact, or a pattern
 * where `*` stands for any characters (`claude-*`); with a `/` it is matched against `<provider>/<model>`,
 * without against the model alone. The first target is picked by weight, the others follow by weight,
 * then `fallbacks`, then the request's own fallbacks.
 */
export const modelAliasSchema = z.strictObject({
  name: z.string().min(1).max(200),
  targets: z
    .array(z.strictObject({ model: aliasTargetModelSchema, weight: z.number().min(0).default(1) }))
    .min(1)
    .max(20),
  fallbacks: z.array(aliasTargetModelSchema).max(10).default([]),
  /** How the first target is chosen among `targets` (docs/routing.md "Strategies"); weighted when absent. */
  strategy: routingStrategySchema.optional(),
  objective: routingObjectiveSchema.optional(),
});

/**
 * Labels of a key or an owner that routing rules read (`key.metadata.tier == "gold"`): at most 32 entries of
 * short strings.
 */
const metadataSchema = z
  .record(z.string().min(1).max(64), z.string().max(256))
  .refine((metadata) => Object.keys(metadata).length <= 32, { message: 'at most 32 entries' });

export type ModelAlias = z.infer<typeof modelAliasSchema>;

export const virtualKeySchema = z.strictObject({
  name: z.string().min(1).max(200),
  description: z.string().max(2000).optional(),
  provider_configs: z.array(virtualKeyProviderConfigSchema).default([]),
  team_id: z.string().optional(),
  customer_id: z.string().optional(),
  user_id: z.string().optional(),
  business_unit_id: z.string().optional(),
  /** Canonical form; a single `budget` object is accepted and normalised into this array. */
  budgets: z.array(budgetSchema).optional(),
  budget: budgetSchema.optional(),
  rate_limit: rateLimitSchema.optional(),
  is_active: z.boolean().default(true),
  /** ISO-8601 time after which the key is rejected (403 virtual_key_expired) but kept. */
  expires_at: z.iso.datetime({ offset: true }).optional(),
  mcp_tools: z.array(mcpToolPolicySchema).optional(),
  /** This key's own aliases; they are looked at before the gateway's. */
  model_aliases: z.array(modelAliasSchema).max(100).optional(),
  /** False: request logs of this key keep no request or response content, whatever `logs.content` says. */
  log_content: z.boolean().optional(),
  /** How a bare model is routed among the key's provider configs (docs/routing.md "Strategies"); weighted when absent. */
  routing_strategy: routingStrategySchema.optional(),
  routing_objective: routingObjectiveSchema.optional(),
  metadata: metadataSchema.optional(),
});

const ownerSchema = z.strictObject({
  name: z.string().min(1).max(200),
  budgets: z.array(budgetSchema).optional(),
  budget: budgetSchema.optional(),
  rate_limit: rateLimitSchema.optional(),
  metadata: metadataSchema.optional(),
});

export const customerSchema = ownerSchema;
export const businessUnitSchema = ownerSchema;
export const teamSchema = ownerSchema.extend({
  customer_id: z.string().optional(),
  business_unit_id: z.string().optional(),
});
export const userSchema = ownerSchema.extend({
  email: z.email().optional(),
  team_id: z.string().optional(),
  customer_id: z.string().optional(),
});

/** The migration form of a virtual key: `POST /api/keys` (docs/governance.md). */
export const legacyKeySchema = z.strictObject({
  name: z.string().min(1),
  budget: budgetSchema.optional(),
  rate_limit: rateLimitSchema.optional(),
  models: z.array(z.string()).optional(),
});

export type Budget = z.infer<typeof budgetSchema>;
