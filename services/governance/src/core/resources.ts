import {
  type Budget,
  budgetSchema,
  businessUnitSchema,
  customerSchema,
  GatewayError,
  newId,
  rateLimitSchema,
  teamSchema,
  userSchema,
  virtualKeyProviderConfigSchema,
  virtualKeySchema,
} from '@gw/shared';
import { z } from 'zod';

/** The governance collections, by their path segment under /api/governance. */
export const COLLECTIONS = ['virtual-keys', 'customers', 'teams', 'users', 'business-units'] as const;
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

const storedOwner = <T extends z.ZodObject>(schema: T) =>
  schema.omit({ budget: true, budgets: true }).extend({
    id: z.string(),
    budgets: z.array(storedBudgetSchema).default([]),
    ...timestamps,
  });

export const storedSchemas = {
  'virtual-keys': storedVirtualKeySchema,
  customers: storedOwner(customerSchema),
  teams: storedOwner(teamSchema),
  users: storedOwner(userSchema),
  'business-units': storedOwner(businessUnitSchema),
} as const;

export const inputSchemas = {
  'virtual-keys': virtualKeySchema,
  customers: customerSchema,
  teams: teamSchema,
  users: userSchema,
  'business-units': businessUnitSchema,
} as const;

export type StoredVirtualKey = z.infer<typeof storedVirtualKeySchema>;
export type StoredProviderConfig = z.infer<typeof storedProviderConfigSchema>;
export interface StoredOwner {
  id: string;
  name: string;
  budgets: StoredBudget[];
  team_id?: string | undefined;
  customer_id?: string | undefined;
  business_unit_id?: string | undefined;
}

export const ID_PREFIX: Record<Collection, string> = {
  'virtual-keys': 'vk',
  customers: 'cus',
  teams: 'team',
  users: 'user',
  'business-units': 'bu',
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

export { rateLimitSchema };
