import type { Store } from '@gw/shared/store';
import {
  type AdmissionCheck,
  budgetChecks,
  counterOwner,
  type Level,
  rateLimitChecks,
} from './admission-checks.ts';
import type { UsageReport } from './governance-messages.ts';
import { MICROS_PER_USD } from './pricing.ts';
import { isVirtualKey, type OwnerCollection, type StoredOf } from './resources.ts';

/** The level of each collection whose resources own budgets and limits. */
export const LEVEL_OF: Record<OwnerCollection, Level> = {
  'virtual-keys': 'virtual_key',
  customers: 'customer',
  teams: 'team',
  users: 'user',
  'business-units': 'business_unit',
};

/** Current spend of every budget and count of every limit of a resource (`GET …/{id}/usage`). */
export async function usageReport(options: {
  store: Store;
  collection: OwnerCollection;
  resource: StoredOf<OwnerCollection>;
  now: number;
}): Promise<UsageReport> {
  const { resource, now } = options;
  const level = LEVEL_OF[options.collection];
  const current = { reserve: 0, strict: false, now };
  const sections: Array<{ scope: string; checks: AdmissionCheck[] }> = [
    {
      scope: level,
      checks: [
        ...budgetChecks(resource, level, current),
        ...rateLimitChecks({ id: resource.id, name: resource.name, level }, resource.rate_limit, now),
      ],
    },
  ];
  for (const config of isVirtualKey(resource) ? resource.provider_configs : []) {
    const id = `${resource.id}/${config.provider}`;
    sections.push({
      scope: `provider_config:${config.provider}`,
      checks: [
        ...budgetChecks(
          {
            ...config,
            id,
            name: id,
            created_at: resource.created_at,
            counterOwner: counterOwner('virtual_key', resource.id),
          },
          'provider_config',
          current,
        ),
        ...rateLimitChecks(
          { id, name: id, level: 'provider_config', counterOwner: counterOwner('virtual_key', resource.id) },
          config.rate_limit,
          now,
        ),
      ],
    });
  }
  const values = await options.store.readCounters(
    sections.flatMap((section) => section.checks.map(({ check }) => check)),
  );
  let offset = 0;
  return {
    id: resource.id,
    usage: sections.map((section) => ({
      scope: section.scope,
      entries: section.checks.map(({ check, meaning }) => {
        const used = values[offset++] ?? 0;
        const resetsAt = new Date(meaning.endMs).toISOString();
        if (meaning.kind === 'budget') {
          return {
            kind: 'budget',
            budget_id: meaning.budget.id,
            max_limit: meaning.budget.max_limit,
            reset_duration: meaning.budget.reset_duration,
            used: used / MICROS_PER_USD,
            remaining: Math.max(0, (check.limit - used) / MICROS_PER_USD),
            resets_at: resetsAt,
          };
        }
        return {
          kind: meaning.kind,
          limit: check.limit,
          used,
          remaining: Math.max(0, check.limit - used),
          resets_at: resetsAt,
        };
      }),
    })),
  };
}
