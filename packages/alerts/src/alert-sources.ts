import type { ProviderHealthReport } from '@gw/shared/health';
import { z } from 'zod';

/**
 * Where alert rules read the gateway's state. Each is a small interface the owning component satisfies (or an
 * adapter over it, composed in the process that evaluates); a rule whose source is absent stays quiet.
 */

/** Provider health states: the router (`RouterService.health`, in process or over gRPC). */
export interface HealthSource {
  health(): Promise<ProviderHealthReport[]>;
}

/** The current period's spend of one budget. */
export interface BudgetUsage {
  budget_id: string;
  /** `virtual_key`, `team`, `customer`, `user`, `business_unit` or `provider_config`. */
  level: string;
  /** The resource the budget belongs to (a key id, a team id; `<key>/<provider>` for a provider config). */
  owner_id: string;
  max_limit: number;
  used: number;
  /** When the period ends (ISO 8601): names the period, so a threshold alerts once in each. */
  resets_at: string;
}

/** Every budget of the hierarchy with its usage. */
export interface BudgetSource {
  budgets(): Promise<BudgetUsage[]>;
}

/** The request log's aggregates (`LogStore.stats` of `@gw/logs`: SQLite embedded, PostgreSQL in a cluster). */
export interface LogStatsSource {
  stats(query: {
    filter: { from: number; to: number; provider?: string; model?: string; status?: number };
    bucket_ms: number;
    group_by?: 'provider';
  }): Promise<{
    buckets: ReadonlyArray<{
      group: string | null;
      count: number;
      errors: number;
      latency_p50_ms: number;
      latency_p95_ms: number;
      latency_p99_ms: number;
    }>;
  }>;
}

/**
 * Requests the gateway dropped (a full provider queue, a connection cap, a drain) and records or spans lost,
 * counted per reason and minute: `LogStore.dropped` of `@gw/logs`, as `/api/logs/dropped` answers it.
 */
export interface DroppedSource {
  dropped(query: {
    from: number;
    to: number;
    bucket_ms: number;
  }): Promise<{ buckets: ReadonlyArray<{ reason: string; count: number }> }>;
}

/** What `@gw/vault` reports of a reference it could not read (its `SecretFailure`; never a value). */
export interface SecretFailure {
  /** The reference as config names it. */
  reference: string;
  backend: string;
  error: string;
  at: Date;
}

/** The vault's hook: calls the listener on every failed refresh; answers a function that unsubscribes. */
export interface SecretFailureSource {
  onSecretFailure(listener: (failure: SecretFailure) => void): () => void;
}

const OWNER_COLLECTIONS = {
  'virtual-keys': 'virtual_key',
  customers: 'customer',
  teams: 'team',
  users: 'user',
  'business-units': 'business_unit',
} as const;
type OwnerCollection = keyof typeof OWNER_COLLECTIONS;

const listSchema = z.array(z.object({ id: z.string() }).loose());
const usageSchema = z.object({
  usage: z.array(
    z.object({
      scope: z.string(),
      entries: z.array(z.object({ kind: z.string() }).loose()),
    }),
  ),
});
const budgetEntrySchema = z.object({
  kind: z.literal('budget'),
  budget_id: z.string(),
  max_limit: z.number(),
  used: z.number(),
  resets_at: z.string(),
});

/** Resources read per evaluation at most (each costs a usage read); the rest wait for a later one. */
const MAX_RESOURCES = 2_000;

/**
 * Budgets through governance's management interface (`GovernanceService.manage`, in process or over gRPC):
 * every owner resource's usage report, flattened.
 */
export function governanceBudgetSource(
  manage: (
    request:
      | { action: 'list'; collection: OwnerCollection }
      | { action: 'usage'; collection: OwnerCollection; id: string },
  ) => Promise<unknown>,
): BudgetSource {
  return {
    async budgets() {
      const budgets: BudgetUsage[] = [];
      let read = 0;
      for (const collection of Object.keys(OWNER_COLLECTIONS) as OwnerCollection[]) {
        const resources = listSchema.parse(await manage({ action: 'list', collection }));
        for (const resource of resources) {
          if (read++ >= MAX_RESOURCES) return budgets;
          const report = usageSchema.parse(await manage({ action: 'usage', collection, id: resource.id }));
          for (const section of report.usage) {
            const level = section.scope.startsWith('provider_config:') ? 'provider_config' : section.scope;
            const provider = section.scope.slice('provider_config:'.length);
            for (const entry of section.entries) {
              const budget = budgetEntrySchema.safeParse(entry);
              if (!budget.success) continue;
              budgets.push({
                ...budget.data,
                level,
                owner_id: level === 'provider_config' ? `${resource.id}/${provider}` : resource.id,
              });
            }
          }
        }
      }
      return budgets;
    },
  };
}
