import { randomUUID } from 'node:crypto';
import {
  type ClientConfig,
  type GatewayConfig,
  GatewayError,
  invalidRequest,
  type Logger,
  notFound,
  type Usage,
} from '@gw/shared';
import type { CounterCheck, Store } from '@gw/shared/store';
import { authorizeAnonymous, checkRequiredHeaders } from './anonymous.ts';
import { GovernanceRepository } from './governance-repository.ts';
import type {
  AuthorizeRequest,
  AuthorizeResult,
  GovernanceService,
  ManageRequest,
  PlanTarget,
  SettlementCounter,
  SettlementPlan,
  SettleRequest,
} from './governance-service.ts';
import { fixedDurationMs, periodAt } from './periods.ts';
import { MICROS_PER_USD, PriceCatalog } from './pricing.ts';
import {
  COLLECTIONS,
  type Collection,
  type StoredBudget,
  type StoredOwner,
  type StoredProviderConfig,
  type StoredVirtualKey,
} from './resources.ts';

type Level = 'virtual_key' | 'team' | 'customer' | 'user' | 'business_unit' | 'provider_config';

/** What a counter check means, to turn a refusal into the right error. */
interface CheckMeaning {
  kind: 'budget' | 'requests' | 'tokens';
  level: Level;
  name: string;
  limitText: string;
  endMs: number;
}

interface Checks {
  checks: CounterCheck[];
  meanings: CheckMeaning[];
}

export interface GovernanceCoreDependencies {
  store: Store;
  logger: Logger;
  client: ClientConfig;
  /** The config file's governance section: resources to seed, prices, budget settings. */
  governance?: GatewayConfig['governance'];
  now?: () => number;
  random?: () => number;
}

const LEVEL_TEXT: Record<Level, string> = {
  virtual_key: 'virtual key',
  team: 'team',
  customer: 'customer',
  user: 'user',
  business_unit: 'business unit',
  provider_config: 'provider config',
};

/**
 * Governance core: authentication of virtual keys, access to providers and models, hierarchical budgets
 * and rate limits admitted in one atomic store step, exactly-once settlement, and the management API.
 */
export class GovernanceCore implements GovernanceService {
  private readonly dependencies: GovernanceCoreDependencies;
  private readonly repository: GovernanceRepository;
  private readonly prices: PriceCatalog;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly settings: GatewayConfig['governance']['settings'];
  private sweepTimer: NodeJS.Timeout | undefined;

  private constructor(dependencies: GovernanceCoreDependencies) {
    this.dependencies = dependencies;
    this.now = dependencies.now ?? Date.now;
    this.random = dependencies.random ?? Math.random;
    this.repository = new GovernanceRepository({
      store: dependencies.store,
      logger: dependencies.logger,
      now: this.now,
    });
    this.prices = new PriceCatalog(dependencies.governance?.pricing);
    this.settings = dependencies.governance?.settings ?? {
      strict_budgets: false,
      settle_deadline_ms: 900_000,
      sweep_interval_ms: 30_000,
      default_max_completion_tokens: 4096,
    };
  }

  static async start(dependencies: GovernanceCoreDependencies): Promise<GovernanceCore> {
    const core = new GovernanceCore(dependencies);
    await core.repository.start();
    await core.seed();
    if (core.settings.sweep_interval_ms > 0) {
      core.sweepTimer = setInterval(() => {
        core.sweep().catch((error) => dependencies.logger.error({ err: error }, 'settlement sweep failed'));
      }, core.settings.sweep_interval_ms);
      core.sweepTimer.unref();
    }
    return core;
  }

  async close(): Promise<void> {
    clearInterval(this.sweepTimer);
    await this.repository.close();
  }

  // --- authorize ---------------------------------------------------------------------------------------

  async authorize(request: AuthorizeRequest): Promise<AuthorizeResult> {
    if (!request.virtualKey) return authorizeAnonymous(this.dependencies.client, request);
    checkRequiredHeaders(this.dependencies.client, request.headerNames);
    const key = await this.repository.findVirtualKey(request.virtualKey);
    if (!key)
      throw new GatewayError({
        type: 'virtual_key_invalid',
        message: 'the virtual key is not valid',
      });
    if (!key.is_active) {
      throw new GatewayError({
        type: 'virtual_key_inactive',
        message: `virtual key '${key.name}' is inactive`,
      });
    }
    const now = this.now();
    if (key.expires_at && Date.parse(key.expires_at) <= now) {
      throw new GatewayError({
        type: 'virtual_key_expired',
        message: `virtual key '${key.name}' expired at ${key.expires_at}`,
      });
    }
    const identity = { virtualKeyId: key.id, virtualKeyName: key.name, mcpTools: key.mcp_tools ?? [] };
    if (request.kind !== 'llm') return { targets: [], ...identity };
    return { ...(await this.admit(key, this.access(key, request.targets), request, now)), ...identity };
  }

  /** Targets the key may use, in order: the requested one (or, for a bare model, all by weight), then fallbacks. */
  private access(
    key: StoredVirtualKey,
    targets: PlanTarget[],
  ): Array<PlanTarget & { config: StoredProviderConfig }> {
    const configs = key.provider_configs;
    if (configs.length === 0) {
      throw new GatewayError({
        type: 'provider_not_allowed',
        message: `virtual key '${key.name}' allows no provider`,
      });
    }
    const allows = (config: StoredProviderConfig, model: string) =>
      config.allowed_models.includes('*') || config.allowed_models.includes(model);
    const [primary, ...fallbacks] = targets;
    if (!primary) throw invalidRequest('model: is required', 'model');
    let ordered: StoredProviderConfig[];
    if (primary.provider === '') {
      const eligible = configs.filter((config) => allows(config, primary.model));
      if (eligible.length === 0) {
        throw new GatewayError({
          type: 'model_not_allowed',
          message: `no provider of virtual key '${key.name}' allows model '${primary.model}'`,
        });
      }
      ordered = this.weightedOrder(eligible);
    } else {
      const config = configs.find((candidate) => candidate.provider === primary.provider);
      if (!config) {
        throw new GatewayError({
          type: 'provider_not_allowed',
          message: `virtual key '${key.name}' does not allow provider '${primary.provider}'`,
          provider: primary.provider,
        });
      }
      if (!allows(config, primary.model)) {
        throw new GatewayError({
          type: 'model_not_allowed',
          message: `virtual key '${key.name}' does not allow model '${primary.model}' on provider '${primary.provider}'`,
          provider: primary.provider,
          model: primary.model,
        });
      }
      ordered = [config];
    }
    const planned = ordered.map((config) => ({
      provider: config.provider,
      model: primary.model,
      keyIds: config.key_ids,
      config,
    }));
    for (const fallback of fallbacks) {
      const config = configs.find((candidate) => candidate.provider === fallback.provider);
      const duplicate = planned.some(
        (target) => target.provider === fallback.provider && target.model === fallback.model,
      );
      // Fallbacks the key does not allow are dropped, not fatal: the allowed targets still run.
      if (config && allows(config, fallback.model) && !duplicate)
        planned.push({ ...fallback, keyIds: config.key_ids, config });
    }
    return planned;
  }

  /** A weighted random first choice, then the rest by weight: the others become ordered fallbacks. */
  private weightedOrder(configs: StoredProviderConfig[]): StoredProviderConfig[] {
    const byWeight = [...configs].sort((left, right) => right.weight - left.weight);
    const total = byWeight.reduce((sum, config) => sum + config.weight, 0);
    if (total <= 0) return byWeight;
    let point = this.random() * total;
    let first = byWeight[0]!;
    for (const config of byWeight) {
      point -= config.weight;
      if (point < 0) {
        first = config;
        break;
      }
    }
    return [first, ...byWeight.filter((config) => config !== first)];
  }

  private hierarchy(key: StoredVirtualKey): Array<{
    level: Level;
    owner: { id: string; name: string; budgets: StoredBudget[]; created_at?: string };
  }> {
    const team = this.repository.get<StoredOwner>('teams', key.team_id);
    const user = this.repository.get<StoredOwner>('users', key.user_id);
    const customer = this.repository.get<StoredOwner>(
      'customers',
      key.customer_id ?? team?.customer_id ?? user?.customer_id,
    );
    const unit = this.repository.get<StoredOwner>(
      'business-units',
      key.business_unit_id ?? team?.business_unit_id,
    );
    const levels: Array<{ level: Level; owner: StoredOwner | StoredVirtualKey | undefined }> = [
      { level: 'virtual_key', owner: key },
      { level: 'team', owner: team },
      { level: 'customer', owner: customer },
      { level: 'user', owner: user },
      { level: 'business_unit', owner: unit },
    ];
    return levels.flatMap(({ level, owner }) => (owner ? [{ level, owner }] : []));
  }

  private budgetChecks(
    owner: { id: string; name: string; budgets: StoredBudget[]; created_at?: string },
    level: Level,
    reserve: number,
    now: number,
  ): Checks {
    const checks: CounterCheck[] = [];
    const meanings: CheckMeaning[] = [];
    for (const budget of owner.budgets) {
      const period = periodAt({
        duration: budget.reset_duration,
        nowMs: now,
        calendarAligned: budget.calendar_aligned,
        anchorMs: anchorOf(owner.created_at),
      });
      checks.push({
        key: `b:${budget.id}:${period.startMs}`,
        limit: Math.round(budget.max_limit * MICROS_PER_USD),
        // Without reservations a budget only needs a positive balance; strict mode needs room for the worst case.
        need: this.settings.strict_budgets ? reserve : 1,
        amount: this.settings.strict_budgets ? reserve : 0,
        expireAtMs: period.endMs,
      });
      meanings.push({
        kind: 'budget',
        level,
        name: owner.name,
        limitText: `$${budget.max_limit} per ${budget.reset_duration}`,
        endMs: period.endMs,
      });
    }
    return { checks, meanings };
  }

  private rateLimitChecks(
    id: string,
    name: string,
    level: Level,
    limit: StoredVirtualKey['rate_limit'],
    now: number,
  ): Checks {
    const checks: CounterCheck[] = [];
    const meanings: CheckMeaning[] = [];
    if (!limit) return { checks, meanings };
    const window = (duration: string | undefined) => {
      const length = fixedDurationMs(duration ?? '1m');
      const start = Math.floor(now / length) * length;
      return { length, start, end: start + length };
    };
    if (limit.request_max_limit !== undefined) {
      const { length, start, end } = window(limit.request_reset_duration);
      checks.push({
        key: `r:${id}:${length}:${start}`,
        limit: limit.request_max_limit,
        need: 1,
        amount: 1,
        expireAtMs: end,
      });
      meanings.push({
        kind: 'requests',
        level,
        name,
        limitText: `${limit.request_max_limit} requests per ${limit.request_reset_duration ?? '1m'}`,
        endMs: end,
      });
    }
    if (limit.token_max_limit !== undefined) {
      const { length, start, end } = window(limit.token_reset_duration);
      checks.push({
        key: `t:${id}:${length}:${start}`,
        limit: limit.token_max_limit,
        need: 1,
        amount: 0,
        expireAtMs: end,
      });
      meanings.push({
        kind: 'tokens',
        level,
        name,
        limitText: `${limit.token_max_limit} tokens per ${limit.token_reset_duration ?? '1m'}`,
        endMs: end,
      });
    }
    return { checks, meanings };
  }

  private async admit(
    key: StoredVirtualKey,
    targets: Array<PlanTarget & { config: StoredProviderConfig }>,
    request: AuthorizeRequest,
    now: number,
  ): Promise<AuthorizeResult> {
    const promptTokens = request.estimate?.promptTokens ?? 0;
    const maxCompletion =
      request.estimate?.maxCompletionTokens ?? this.settings.default_max_completion_tokens;
    const reserve = this.settings.strict_budgets
      ? Math.max(
          ...targets.map((target) => this.prices.worstCaseMicros(target.model, promptTokens, maxCompletion)),
        )
      : 0;

    const required: Checks = { checks: [], meanings: [] };
    for (const { level, owner } of this.hierarchy(key))
      merge(required, this.budgetChecks(owner, level, reserve, now));
    merge(required, this.rateLimitChecks(key.id, key.name, 'virtual_key', key.rate_limit, now));
    const alternatives = targets.map((target) => {
      const checks: Checks = { checks: [], meanings: [] };
      const name = `${key.name}/${target.provider}`;
      merge(
        checks,
        this.budgetChecks(
          { ...target.config, id: `${key.id}/${target.provider}`, name, created_at: key.created_at },
          'provider_config',
          reserve,
          now,
        ),
      );
      merge(
        checks,
        this.rateLimitChecks(
          `${key.id}/${target.provider}`,
          name,
          'provider_config',
          target.config.rate_limit,
          now,
        ),
      );
      return checks;
    });

    const settlement: SettlementPlan = {
      reservationId: `res_${randomUUID()}`,
      virtualKeyId: key.id,
      counters: settlementCounters(required),
      // Amounts an alternative reserves if it is the admitted one; `reservedProvider` says which one was.
      providerCounters: Object.fromEntries(
        targets.map((target, index) => [target.provider, settlementCounters(alternatives[index]!)]),
      ),
      alternativeProviders: targets.map((target) => target.provider),
      estimate: {
        provider: targets[0]!.provider,
        model: targets[0]!.model,
        usage: {
          prompt_tokens: promptTokens,
          completion_tokens: maxCompletion,
          total_tokens: promptTokens + maxCompletion,
        },
      },
    };
    const result = await this.dependencies.store.admit({
      required: required.checks,
      alternatives: alternatives.map((group) => group.checks),
      reservation: {
        id: settlement.reservationId,
        deadlineMs: now + this.settings.settle_deadline_ms,
        payload: JSON.stringify(settlement),
      },
    });
    const admitted = result.passing[0];
    if (admitted !== undefined) settlement.reservedProvider = targets[admitted]!.provider;
    if (!result.allowed) throw this.refusal(result.failed, required, alternatives, now);
    return {
      targets: result.passing.map((index) => stripConfig(targets[index]!)),
      virtualKeyId: key.id,
      settlement,
    };
  }

  private refusal(
    failed: { group: number; index: number; current: number } | undefined,
    required: Checks,
    alternatives: Checks[],
    now: number,
  ): GatewayError {
    const meaning = failed
      ? (failed.group === -1 ? required : alternatives[failed.group])?.meanings[failed.index]
      : undefined;
    if (!meaning)
      return new GatewayError({
        type: 'request_limit_exceeded',
        message: 'no provider of the virtual key is within its limits',
        retryAfter: 60,
      });
    const who = `${LEVEL_TEXT[meaning.level]} '${meaning.name}'`;
    const retryAfter = Math.max(1, Math.ceil((meaning.endMs - now) / 1000));
    const resets = new Date(meaning.endMs).toISOString();
    if (meaning.kind === 'budget') {
      const used = (failed?.current ?? 0) / MICROS_PER_USD;
      return new GatewayError({
        type: 'budget_exceeded',
        code: meaning.level,
        message: `budget of ${who} is exhausted: $${used.toFixed(6)} used of ${meaning.limitText}; it resets at ${resets}`,
        retryAfter,
      });
    }
    return new GatewayError({
      type: meaning.kind === 'requests' ? 'request_limit_exceeded' : 'token_limit_exceeded',
      code: meaning.level,
      message: `${meaning.kind === 'requests' ? 'request' : 'token'} limit of ${who} reached (${meaning.limitText}); retry after ${resets}`,
      retryAfter,
    });
  }

  // --- settle ------------------------------------------------------------------------------------------

  async settle(request: SettleRequest): Promise<void> {
    const plan = request.settlement;
    const cost = this.prices.costMicros(request.model, request.usage);
    const actual = (counter: SettlementCounter) =>
      counter.kind === 'budget' ? cost : request.usage.total_tokens;
    const adjustments = plan.counters.map((counter) => ({
      key: counter.key,
      delta: actual(counter) - counter.reserved,
      expireAtMs: counter.expireAtMs,
    }));
    for (const [provider, counters] of Object.entries(plan.providerCounters)) {
      for (const counter of counters) {
        const charged = provider === request.provider ? actual(counter) : 0;
        const reserved = provider === plan.reservedProvider ? counter.reserved : 0;
        adjustments.push({ key: counter.key, delta: charged - reserved, expireAtMs: counter.expireAtMs });
      }
    }
    await this.dependencies.store.settleReservation({ id: plan.reservationId, adjustments });
  }

  /** Charges reservations whose Settle never came (a process died mid-request) at their estimate. */
  async sweep(): Promise<number> {
    const due = await this.dependencies.store.dueReservations(this.now(), 200);
    let charged = 0;
    for (const { id, payload, alternative } of due) {
      try {
        const plan = JSON.parse(payload) as SettlementPlan;
        const reservedProvider = plan.alternativeProviders[alternative];
        if (reservedProvider !== undefined) plan.reservedProvider = reservedProvider;
        await this.settle({ requestId: id, settlement: plan, ...plan.estimate });
        charged++;
      } catch (error) {
        this.dependencies.logger.error(
          { err: error, reservation: id },
          'could not charge an unsettled reservation',
        );
      }
    }
    if (charged > 0)
      this.dependencies.logger.warn({ charged }, 'charged unsettled reservations at their estimate');
    return charged;
  }

  // --- management --------------------------------------------------------------------------------------

  async manage(request: ManageRequest): Promise<unknown> {
    const collection = request.collection as Collection;
    if (!COLLECTIONS.includes(collection)) {
      throw notFound(`governance resource '${request.collection}'`);
    }
    const id = request.id ?? '';
    const existing = () => {
      const resource = this.repository.get(collection, id);
      if (!resource) throw notFound(`${collection} '${id}'`);
      return resource;
    };
    switch (request.action) {
      case 'list':
        return this.repository.list(collection).map((resource) => this.repository.view(collection, resource));
      case 'get':
        return this.repository.view(collection, existing());
      case 'create':
        return this.repository.create(collection, request.body);
      case 'update':
        return this.repository.update(collection, id, request.body);
      case 'delete':
        await this.repository.delete(collection, id);
        return { deleted: id };
      case 'rotate':
        if (collection !== 'virtual-keys') throw invalidRequest('only virtual keys can be rotated');
        return this.repository.rotate(id);
      case 'usage':
        return this.usage(collection, existing() as StoredOwner & Partial<StoredVirtualKey>);
      default:
        throw invalidRequest(`unknown action '${String(request.action)}'`);
    }
  }

  /** Current spend of every budget and count of every limit of a resource. */
  private async usage(collection: Collection, resource: StoredOwner & Partial<StoredVirtualKey>) {
    const now = this.now();
    const level: Level =
      collection === 'virtual-keys'
        ? 'virtual_key'
        : (collection.replace('-', '_').replace(/s$/, '') as Level);
    const sections: Array<{ scope: string; checks: Checks; budgets: StoredBudget[] }> = [];
    const budgets = this.budgetChecks(resource as never, level, 0, now);
    const limits = this.rateLimitChecks(resource.id, resource.name, level, resource.rate_limit, now);
    sections.push({
      scope: collection === 'virtual-keys' ? 'virtual_key' : level,
      checks: merge(budgets, limits),
      budgets: resource.budgets,
    });
    for (const config of resource.provider_configs ?? []) {
      const id = `${resource.id}/${config.provider}`;
      const checks = this.budgetChecks(
        { ...config, id, name: id, created_at: resource.created_at as string },
        'provider_config',
        0,
        now,
      );
      merge(checks, this.rateLimitChecks(id, id, 'provider_config', config.rate_limit, now));
      sections.push({ scope: `provider_config:${config.provider}`, checks, budgets: config.budgets });
    }
    const values = await this.dependencies.store.readCounters(
      sections.flatMap((section) => section.checks.checks.map((check) => check.key)),
    );
    let offset = 0;
    return {
      id: resource.id,
      usage: sections.map((section) => {
        let budgetIndex = 0;
        const entries = section.checks.checks.map((check, index) => {
          const meaning = section.checks.meanings[index]!;
          const used = values[offset++] ?? 0;
          const resetsAt = new Date(meaning.endMs).toISOString();
          if (meaning.kind === 'budget') {
            const budget = section.budgets[budgetIndex++]!;
            return {
              kind: 'budget',
              budget_id: budget.id,
              max_limit: budget.max_limit,
              reset_duration: budget.reset_duration,
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
        });
        return { scope: section.scope, entries };
      }),
    };
  }

  /** Resources of the config file, written at start (the file wins for the ids it lists). */
  private async seed(): Promise<void> {
    const governance = this.dependencies.governance;
    if (!governance) return;
    const order: Array<[Collection, Array<Record<string, unknown>>]> = [
      ['business-units', governance.business_units],
      ['customers', governance.customers],
      ['teams', governance.teams],
      ['users', governance.users],
    ];
    for (const [collection, items] of order) {
      for (const [index, item] of items.entries()) {
        const { id = `config-${collection}-${index}`, ...body } = item as { id?: string };
        if (this.repository.get(collection, id)) await this.repository.update(collection, id, body);
        else await this.repository.create(collection, body, { id });
      }
    }
    for (const [index, item] of governance.virtual_keys.entries()) {
      const { id = `config-vk-${index}`, value, ...body } = item;
      if (value !== undefined && !value.startsWith('sk-gw-'))
        throw new Error(`governance.virtual_keys[${index}].value: must start with sk-gw-`);
      if (this.repository.get('virtual-keys', id)) await this.repository.update('virtual-keys', id, body);
      else await this.repository.create('virtual-keys', body, { id, ...(value ? { value } : {}) });
    }
  }
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

function merge(target: Checks, source: Checks): Checks {
  target.checks.push(...source.checks);
  target.meanings.push(...source.meanings);
  return target;
}

function settlementCounters(group: Checks): SettlementCounter[] {
  return group.checks.flatMap((check, index) => {
    const kind = group.meanings[index]!.kind;
    if (kind === 'requests') return [];
    return [
      {
        key: check.key,
        kind: kind === 'budget' ? 'budget' : 'tokens',
        reserved: check.amount,
        expireAtMs: check.expireAtMs,
      },
    ];
  });
}

function stripConfig(target: PlanTarget & { config: StoredProviderConfig }): PlanTarget {
  return { provider: target.provider, model: target.model, keyIds: target.keyIds };
}

export type { Usage };
