import {
  type Budget,
  budgetSchema,
  businessUnitSchema,
  customerSchema,
  GatewayError,
  modelAliasSchema,
  newId,
  routingRuleObjectSchema,
  routingRuleSchema,
  teamSchema,
  userSchema,
  virtualKeyProviderConfigSchema,
  virtualKeySchema,
} from '@gw/shared';
import { z } from 'zod';

/** The governance collections, by their path segment under /api/governance. */
export const COLLECTIONS = [
  'virtual-keys',
  'customers',
  'teams',
  'users',
  'business-units',
  'model-aliases',
  'routing-rules',
] as const;
/** The collections whose resources own budgets and limits (not model aliases or routing rules). */
export type OwnerCollection = Exclude<Collection, 'model-aliases' | 'routing-rules'>;
export type Collection = (typeof COLLECTIONS)[number];

export const storedBudgetSchema = budgetSchema.extend({ id: z.string() });
export type StoredBudget = z.infer<typeof storedBudgetSchema>;

const timestamps = { created_at: z.string(), updated_at: z.string() };

export const storedProviderConfigSchema = virtualKeyProviderConfigSchema
  .omit({ budget: true, budgets: true })
  .extend({ budgets: z.array(storedBudgetSchema).default([]) });

export const storedVirtualKeySchema = virtualKeySchema
  .omit({ budget: true, budgets: true, provider_configs: true })
  .extend({
    id: z.string(),
    value_hash: z.string(),
    /** The last characters of the key, so operators can tell keys apart; the value itself is never stored. */
    value_hint: z.string(),
    budgets: z.array(storedBudgetSchema).default([]),
    provider_configs: z.array(storedProviderConfigSchema).default([]),
    ...timestamps,
  });

const stored = { id: z.string(), budgets: z.array(storedBudgetSchema).default([]), ...timestamps };
const withoutBudgetInput = { budget: true, budgets: true } as const;

export const storedSchemas = {
  'virtual-keys': storedVirtualKeySchema,
  customers: customerSchema.omit(withoutBudgetInput).extend(stored),
  teams: teamSchema.omit(withoutBudgetInput).extend(stored),
  users: userSchema.omit(withoutBudgetInput).extend(stored),
  'business-units': businessUnitSchema.omit(withoutBudgetInput).extend(stored),
  'model-aliases': modelAliasSchema.extend({ id: z.string(), ...timestamps }),
  'routing-rules': routingRuleObjectSchema.extend({ id: z.string(), ...timestamps }),
} as const;

export const inputSchemas = {
  'virtual-keys': virtualKeySchema,
  customers: customerSchema,
  teams: teamSchema,
  users: userSchema,
  'business-units': businessUnitSchema,
  'model-aliases': modelAliasSchema,
  'routing-rules': routingRuleSchema,
} as const;

export type StoredVirtualKey = z.infer<typeof storedVirtualKeySchema>;
export type StoredProviderConfig = z.infer<typeof storedProviderConfigSchema>;
/** A stored resource of a collection. */
export type StoredOf<C extends Collection> = z.infer<(typeof storedSchemas)[C]>;
export type Stored = StoredOf<Collection>;
/** A stored owner of keys (customer, team, user, business unit). */

export const ID_PREFIX: Record<Collection, string> = {
  'virtual-keys': 'vk',
  customers: 'cus',
  teams: 'team',
  users: 'user',
  'business-units': 'bu',
  'model-aliases': 'alias',
  'routing-rules': 'rule',
};

/**
 * `budgets` (array) is canonical; a single `budget` object is accepted and becomes a one-element array.
 * Budgets keep their ids across updates (by id, else by position) so an edit does not reset their usage.
 */
export function normalizeBudgets(
  input: { budgets?: Budget[] | undefined; budget?: Budget | undefined },
  previous: StoredBudget[] = [],
): StoredBudget[] {
  if (input.budgets && input.budget) {
    throw new GatewayError({
      type: 'invalid_request',
      message: 'send either budgets (array) or budget (object), not both',
      param: 'budget',
    });
  }
  const budgets = input.budgets ?? (input.budget ? [input.budget] : []);
  return budgets.map((budget, index) => ({
    ...budget,
    id: budget.id ?? (previous.find((old) => old.id === budget.id) ?? previous[index])?.id ?? newId('bud'),
  }));
}

/** True for a stored virtual key (the one collection whose resources carry a value hash). */
export function isVirtualKey(resource: Stored): resource is StoredVirtualKey {
  return 'value_hash' in resource;
}

/** Provider configs of a key as stored: each keeps its budgets' ids from the config of the same provider. */
export function normalizeProviderConfigs(
  input: z.infer<typeof virtualKeySchema>['provider_configs'] | undefined,
  previous: StoredVirtualKey['provider_configs'],
) {
  return (input ?? []).map((config) => {
    const { budget, budgets, ...rest } = config;
    const old = previous.find((candidate) => candidate.provider === config.provider);
    return { ...rest, budgets: normalizeBudgets({ budgets, budget }, old?.budgets) };
  });
}
