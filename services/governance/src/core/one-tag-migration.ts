import type { Logger } from '@gw/shared';
import type { OneTagMigrationPlan, RedisStore } from '@gw/shared/store';
import { counterOwner, hierarchy } from './admission-checks.ts';
import { type SettlementCounter, type SettlementPlan, settlementPlanSchema } from './governance-messages.ts';
import type { GovernanceRepository } from './governance-repository.ts';
import { LEVEL_OF } from './usage-report.ts';

// Whose each counter of the one-`{gov}`-tag layout is, for its move to its owner's slot (the store's
// redis-migration.ts moves it; docs/governance.md "Upgrading a cluster"). A counter's key names no owner there:
// `b:<budget id>:<period start>` is a budget's (found in the resources that hold it), `r:`/`t:<id>:<length>:<start>`
// a key's request and token limits (`<id>` a key's, or `<key id>/<provider>` for one of its provider configs).

type OwnerLookup = Pick<GovernanceRepository, 'get' | 'list'>;

const BUDGET_COUNTER = /^b:(.+):-?\d+$/;
const LIMIT_COUNTER = /^[rt]:(.+):\d+:-?\d+$/;

/** The owners of the old layout's counters and reservations, as the resources are now. */
function oneTagMigrationPlan(repository: OwnerLookup): OneTagMigrationPlan {
  const budgetOwners = new Map<string, string[]>();
  const own = (budgets: ReadonlyArray<{ id: string }>, owner: string, into = budgetOwners) => {
    for (const { id } of budgets) {
      const owners = into.get(id) ?? [];
      if (!owners.includes(owner)) owners.push(owner);
      into.set(id, owners);
    }
  };
  for (const key of repository.list('virtual-keys')) {
    // A key's provider configs are the key's counters.
    own([...key.budgets, ...key.provider_configs.flatMap((config) => config.budgets)], keyOwner(key.id));
  }
  for (const collection of ['teams', 'customers', 'users', 'business-units'] as const) {
    for (const owner of repository.list(collection))
      own(owner.budgets, counterOwner(LEVEL_OF[collection], owner.id));
  }

  const keyOfLimit = (id: string): string | undefined => {
    if (repository.get('virtual-keys', id)) return id;
    const slash = id.lastIndexOf('/');
    const keyId = id.slice(0, slash);
    return slash > 0 && repository.get('virtual-keys', keyId) ? keyId : undefined;
  };
  const ownersOf = (counterKey: string): readonly string[] => {
    const budget = BUDGET_COUNTER.exec(counterKey);
    if (budget) return budgetOwners.get(budget[1]!) ?? [];
    const limit = LIMIT_COUNTER.exec(counterKey);
    const keyId = limit && keyOfLimit(limit[1]!);
    return keyId ? [keyOwner(keyId)] : [];
  };

  const payloadOf = (payload: string): string => {
    let plan: SettlementPlan;
    try {
      plan = settlementPlanSchema.parse(JSON.parse(payload));
    } catch {
      // Not a plan: the sweeper reports it as it would have.
      return payload;
    }
    const ownerOfKey = keyOwner(plan.virtualKeyId);
    // The key's hierarchy as admission charged it: each budget id's owners in the order their checks came, so
    // the n-th counter of one budget id in the plan is its n-th owner's.
    const charged = new Map<string, string[]>();
    const key = repository.get('virtual-keys', plan.virtualKeyId);
    for (const { level, owner } of key ? hierarchy(repository, key) : []) {
      own(owner.budgets, counterOwner(level, owner.id), charged);
    }
    const seen = new Map<string, number>();
    const owned = (counter: SettlementCounter): SettlementCounter => {
      if (counter.owner !== undefined) return counter;
      const budget = BUDGET_COUNTER.exec(counter.key);
      // Not a budget: the key's token limit.
      if (!budget) return { ...counter, owner: ownerOfKey };
      const candidates = charged.get(budget[1]!) ?? ownersOf(counter.key);
      const nth = seen.get(counter.key) ?? 0;
      seen.set(counter.key, nth + 1);
      const owner = candidates[nth] ?? candidates[0];
      return owner === undefined ? counter : { ...counter, owner };
    };
    return JSON.stringify({
      ...plan,
      counters: plan.counters.map(owned),
      // A provider config's counters are its key's.
      providerCounters: Object.fromEntries(
        Object.entries(plan.providerCounters).map(([provider, counters]) => [
          provider,
          counters.map((counter) => ({ ...counter, owner: counter.owner ?? ownerOfKey })),
        ]),
      ),
    });
  };

  return { ownersOf, payloadOf };
}

/**
 * Moves the old layout's governance state before this process admits or sweeps (once per Redis: a process that
 * finds it moved does nothing), and logs what it moved.
 */
export async function migrateOneTagLayout(options: {
  store: RedisStore;
  repository: OwnerLookup;
  logger: Logger;
}): Promise<void> {
  const { ran, ...moved } = await options.store.migrateOneTagLayout(oneTagMigrationPlan(options.repository));
  if (!ran) return;
  if (Object.values(moved).every((count) => count === 0)) {
    options.logger.debug('governance: no state of earlier releases to move');
    return;
  }
  options.logger.info(
    moved,
    'governance: moved counters and open reservations of earlier releases (the one {gov} tag, the journal of ' +
      "16 shards) to their owners' tags and the journal's 64 shards",
  );
}

function keyOwner(id: string): string {
  return counterOwner('virtual_key', id);
}
