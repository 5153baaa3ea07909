import type { CounterCheck } from '@gw/shared/store';
import type { GovernanceRepository } from './governance-repository.ts';
import { fixedDurationMs, periodAt } from './periods.ts';
import type { ConfiguredTarget } from './plan-targets.ts';
import { MICROS_PER_USD } from './pricing.ts';
import type { StoredBudget, StoredVirtualKey } from './resources.ts';

export type Level = 'virtual_key' | 'team' | 'customer' | 'user' | 'business_unit' | 'provider_config';

export const LEVEL_TEXT: Record<Level, string> = {
  virtual_key: 'virtual key',
  team: 'team',
  customer: 'customer',
  user: 'user',
  business_unit: 'business unit',
  provider_config: 'provider config',
};

/** What a counter means: which limit of whom, to turn a refusal into the right error and a usage report. */
export type CheckMeaning = {
  level: Level;
  name: string;
  limitText: string;
  endMs: number;
} & ({ kind: 'budget'; budget: StoredBudget } | { kind: 'requests' | 'tokens' });

/** One counter of an admission and what it means. */
export interface AdmissionCheck {
  check: CounterCheck;
  meaning: CheckMeaning;
}

/** Something with budgets: a virtual key, one of its owners, or one of its provider configs. */
export interface BudgetOwner {
  id: string;
  name: string;
  budgets: StoredBudget[];
  created_at?: string | undefined;
  /** Whose counters these are in the store, when not its own (a provider config's are its key's). */
  counterOwner?: string | undefined;
}

const OWNER_TAGS: Record<Level, string> = {
  virtual_key: 'key',
  team: 'team',
  customer: 'customer',
  user: 'user',
  business_unit: 'business_unit',
  provider_config: 'provider_config',
};

/**
 * The owner a counter belongs to in the store (`key:<id>`, `team:<id>`…): one owner's counters are checked in
 * one atomic step, on one slot of a Redis Cluster (docs/governance.md "Allowances").
 */
export function counterOwner(level: Level, id: string): string {
  return `${OWNER_TAGS[level]}:${id}`;
}

const anchors = new Map<string, number>();

/** Creation time of an owner in ms (unaligned periods repeat from it), parsed once per distinct value. */
function anchorOf(createdAt: string | undefined): number {
  if (createdAt === undefined) return 0;
  let anchor = anchors.get(createdAt);
  if (anchor === undefined) {
    anchor = Date.parse(createdAt) || 0;
    if (anchors.size >= 10_000) anchors.clear();
    anchors.set(createdAt, anchor);
  }
  return anchor;
}

/**
 * How budgets are admitted: `reserve` (micro-dollars) is added to each budget until settlement replaces it
 * with the real cost; a strict budget must have room for it, a default one only a positive balance.
 */
export interface BudgetAdmission {
  reserve: number;
  strict: boolean;
  now: number;
}

/**
 * The budgets of an owner in their current periods. Each reserves `reserve` (counted with what is spent, so
 * requests in flight see each other); a default budget admits while its balance is positive, a strict one
 * only when the reservation fits.
 */
export function budgetChecks(owner: BudgetOwner, level: Level, options: BudgetAdmission): AdmissionCheck[] {
  return owner.budgets.map((budget) => {
    const period = periodAt({
      duration: budget.reset_duration,
      nowMs: options.now,
      calendarAligned: budget.calendar_aligned,
      anchorMs: anchorOf(owner.created_at),
    });
    return {
      check: {
        key: `b:${budget.id}:${period.startMs}`,
        owner: owner.counterOwner ?? counterOwner(level, owner.id),
        limit: Math.round(budget.max_limit * MICROS_PER_USD),
        need: options.strict ? options.reserve : 1,
        amount: options.reserve,
        expireAtMs: period.endMs,
      },
      meaning: {
        kind: 'budget',
        level,
        name: owner.name,
        limitText: `$${budget.max_limit} per ${budget.reset_duration}`,
        endMs: period.endMs,
        budget,
      },
    };
  });
}

/**
 * The windows of a rate limit: a request counts at admission (`amount` 1), tokens at settlement (`amount` 0,
 * admission only needs room for one more).
 */
const RATE_WINDOWS = [
  {
    kind: 'requests',
    prefix: 'r',
    amount: 1,
    limit: 'request_max_limit',
    duration: 'request_reset_duration',
  },
  { kind: 'tokens', prefix: 't', amount: 0, limit: 'token_max_limit', duration: 'token_reset_duration' },
] as const;

/** The request and token windows of a rate limit, in the order above. */
export function rateLimitChecks(
  owner: { id: string; name: string; level: Level; counterOwner?: string | undefined },
  limit: StoredVirtualKey['rate_limit'],
  now: number,
): AdmissionCheck[] {
  if (!limit) return [];
  return RATE_WINDOWS.flatMap((window): AdmissionCheck[] => {
    const max = limit[window.limit];
    if (max === undefined) return [];
    const duration = limit[window.duration] ?? '1m';
    const length = fixedDurationMs(duration);
    const start = Math.floor(now / length) * length;
    const end = start + length;
    return [
      {
        check: {
          key: `${window.prefix}:${owner.id}:${length}:${start}`,
          owner: owner.counterOwner ?? counterOwner(owner.level, owner.id),
          limit: max,
          need: 1,
          amount: window.amount,
          expireAtMs: end,
        },
        meaning: {
          kind: window.kind,
          level: owner.level,
          name: owner.name,
          limitText: `${max} ${window.kind} per ${duration}`,
          endMs: end,
        },
      },
    ];
  });
}

/** The owners of a key are looked up in the repository (held in memory: no store read). */
type OwnerLookup = Pick<GovernanceRepository, 'get'>;

/**
 * The key and its owners (team, customer, user, business unit), each with its level: whom an admission
 * charges, so also whom the request's log record names (a team's customer when the key names none).
 */
export function hierarchy(
  repository: OwnerLookup,
  key: StoredVirtualKey,
): Array<{ level: Level; owner: BudgetOwner }> {
  const team = repository.get('teams', key.team_id);
  const user = repository.get('users', key.user_id);
  const customer = repository.get('customers', key.customer_id ?? team?.customer_id ?? user?.customer_id);
  const unit = repository.get('business-units', key.business_unit_id ?? team?.business_unit_id);
  const levels: Array<{ level: Level; owner: BudgetOwner | undefined }> = [
    { level: 'virtual_key', owner: key },
    { level: 'team', owner: team },
    { level: 'customer', owner: customer },
    { level: 'user', owner: user },
    { level: 'business_unit', owner: unit },
  ];
  return levels.flatMap(({ level, owner }) => (owner ? [{ level, owner }] : []));
}

const OWNER_FIELDS = {
  team: 'teamId',
  customer: 'customerId',
  user: 'userId',
  business_unit: 'businessUnitId',
} as const satisfies Partial<Record<Level, string>>;

/** The ids of the owners an admission of the key charges, by the authorization's field names. */
export function chargedOwners(
  repository: OwnerLookup,
  key: StoredVirtualKey,
): Partial<Record<(typeof OWNER_FIELDS)[keyof typeof OWNER_FIELDS], string>> {
  const owners: Partial<Record<(typeof OWNER_FIELDS)[keyof typeof OWNER_FIELDS], string>> = {};
  for (const { level, owner } of hierarchy(repository, key)) {
    if (level !== 'virtual_key' && level !== 'provider_config') owners[OWNER_FIELDS[level]] = owner.id;
  }
  return owners;
}

/** The checks of one admission: `required` must all pass; of `alternatives` (one per target) one must. */
export interface AdmissionChecks {
  required: AdmissionCheck[];
  alternatives: AdmissionCheck[][];
}

/**
 * Every budget of the hierarchy and the key's limits (required), and each target's provider-config budgets
 * and limits (alternatives: the first that passes serves).
 */
export function admissionChecks(options: {
  repository: OwnerLookup;
  key: StoredVirtualKey;
  targets: ConfiguredTarget[];
  budgets: BudgetAdmission;
}): AdmissionChecks {
  const { key, budgets } = options;
  const required = [
    ...hierarchy(options.repository, key).flatMap(({ level, owner }) => budgetChecks(owner, level, budgets)),
    ...rateLimitChecks({ id: key.id, name: key.name, level: 'virtual_key' }, key.rate_limit, budgets.now),
  ];
  // A key's provider configs are the key's counters: its step checks them with the key's own.
  const keyOwner = counterOwner('virtual_key', key.id);
  const alternatives = options.targets.map((target) => {
    const id = `${key.id}/${target.provider}`;
    const name = `${key.name}/${target.provider}`;
    return [
      ...budgetChecks(
        { ...target.config, id, name, created_at: key.created_at, counterOwner: keyOwner },
        'provider_config',
        budgets,
      ),
      ...rateLimitChecks(
        { id, name, level: 'provider_config', counterOwner: keyOwner },
        target.config.rate_limit,
        budgets.now,
      ),
    ];
  });
  return { required, alternatives };
}
