import {
  type ClientConfig,
  EMPTY_USAGE,
  type GatewayConfig,
  GatewayError,
  type Logger,
  type Metrics,
  type ModelAlias,
  modelLabel,
  notFound,
} from '@gw/shared';
import type { HealthBoard } from '@gw/shared/health';
import type { Store } from '@gw/shared/store';
import { type AdmissionChecks, admissionChecks, chargedOwners } from './admission-checks.ts';
import { authorizeAnonymous, checkRequiredHeaders } from './anonymous.ts';
import {
  type ManageRequest,
  type ManageResult,
  type ManageResults,
  settlementPlanSchema,
} from './governance-messages.ts';
import { GovernanceRepository } from './governance-repository.ts';
import type {
  AuthorizeRequest,
  AuthorizeResult,
  GovernanceService,
  PlanTarget,
  SettlementPlan,
  SettleRequest,
  SettleResult,
} from './governance-service.ts';
import { manageResources } from './management.ts';
import { resolveAliases } from './model-aliases.ts';
import { type ConfiguredTarget, planTargets, withoutConfig } from './plan-targets.ts';
import { PriceCatalog } from './pricing.ts';
import { admissionRefusal, assertKeyUsable, refusedFor } from './refusal-errors.ts';
import { ResourceWrites } from './resource-writes.ts';
import type { StoredVirtualKey } from './resources.ts';
import { seedGovernance } from './seeding.ts';
import { settlementAdjustments, settlementPlan, sweepUnsettled } from './settlement.ts';

export interface GovernanceCoreDependencies {
  store: Store;
  logger: Logger;
  client: ClientConfig;
  /** The config file's governance section: resources to seed, prices, budget settings. */
  governance?: GatewayConfig['governance'];
  now?: () => number;
  random?: () => number;
  /** Provider health: a key's weighted provider configs follow it (docs/routing-health.md). */
  health?: HealthBoard | undefined;
  /** Close the board with the core (it made it for itself). */
  ownsHealth?: boolean | undefined;
  /** `gw_cost_usd_total`: what settled requests were charged. */
  metrics?: Metrics | undefined;
  /**
   * Admission only (a cluster's ingress): authorize and settle against the shared store, nothing else. The
   * governance service seeds the config file's resources and sweeps unsettled reservations; every admitting
   * process doing it too would only repeat the same writes.
   */
  admissionOnly?: boolean | undefined;
}

/** Unanswered admissions remembered for release at once (a Redis outage under heavy load). */
const UNANSWERED_LIMIT = 10_000;

/**
 * Reservations this process admitted, remembered until their settle so that it need not read them back (one
 * Redis round trip a request). Bounded: past it the oldest are forgotten, and their settles read the store.
 */
const REMEMBERED_RESERVATIONS = 50_000;

/** Fewer completion tokens than this are no useful answer: a strict request is refused rather than cut so short. */
const MIN_CAPPED_COMPLETION_TOKENS = 16;

/**
 * A budget only holds if what it pays for has a price: a request under a budget for a model without one is
 * refused (unless `governance.settings.unpriced_model_price` says what such models cost) instead of being
 * served for nothing.
 */
function assertPriced(checks: AdmissionChecks, targets: ConfiguredTarget[], prices: PriceCatalog): void {
  const budgeted = [checks.required, ...checks.alternatives].some((group) =>
    group.some(({ meaning }) => meaning.kind === 'budget'),
  );
  if (!budgeted) return;
  const unpriced = targets.find((target) => !prices.price(target.model));
  if (!unpriced) return;
  throw new GatewayError({
    type: 'model_not_allowed',
    message: `model '${unpriced.model}' has no price and a budget applies to this key: set its price in governance.pricing (or governance.settings.unpriced_model_price)`,
    provider: unpriced.provider,
    model: unpriced.model,
  });
}

/**
 * Governance core: authentication of virtual keys, access to providers and models, hierarchical budgets
 * and rate limits admitted in one atomic store step, exactly-once settlement, and the management API.
 */
export class GovernanceCore implements GovernanceService {
  private readonly dependencies: GovernanceCoreDependencies;
  private readonly repository: GovernanceRepository;
  private readonly writes: ResourceWrites;
  private readonly prices: PriceCatalog;
  private readonly now: () => number;
  private readonly random: () => number;
  private readonly settings: GatewayConfig['governance']['settings'];
  private sweepTimer: NodeJS.Timeout | undefined;
  /** Reservations whose admission failed without an answer: released (if they exist) once Redis answers. */
  private readonly unanswered = new Map<string, SettlementPlan>();
  private releaseTimer: NodeJS.Timeout | undefined;
  /** Reservation id → what admission stored for it (the plan and admitted alternative), until settled. */
  private readonly admitted = new Map<string, { plan: SettlementPlan; alternative: number }>();
  /** Settles running in this process, by reservation id. */
  private readonly settling = new Map<string, Promise<SettleResult>>();

  private constructor(dependencies: GovernanceCoreDependencies) {
    this.dependencies = dependencies;
    this.now = dependencies.now ?? Date.now;
    this.random = dependencies.random ?? Math.random;
    this.repository = new GovernanceRepository({ store: dependencies.store, logger: dependencies.logger });
    this.writes = new ResourceWrites({ repository: this.repository, now: this.now });
    this.settings = dependencies.governance?.settings ?? {
      strict_budgets: false,
      settle_deadline_ms: 900_000,
      sweep_interval_ms: 30_000,
      default_max_completion_tokens: 4096,
      expected_completion_tokens: 256,
    };
    this.prices = new PriceCatalog(
      dependencies.governance?.pricing,
      this.settings.unpriced_model_price,
      this.random,
    );
  }

  static async start(dependencies: GovernanceCoreDependencies): Promise<GovernanceCore> {
    const core = new GovernanceCore(dependencies);
    if (dependencies.admissionOnly) {
      await core.repository.start();
      return core;
    }
    await core.repository.start({ reseed: () => core.seed() });
    await core.seed();
    if (core.settings.sweep_interval_ms > 0) {
      core.sweepTimer = setInterval(() => {
        core.sweep().catch((error) => dependencies.logger.error({ err: error }, 'settlement sweep failed'));
      }, core.settings.sweep_interval_ms);
      core.sweepTimer.unref();
    }
    return core;
  }

  /** Closes it as a resource of a composition root (its AsyncDisposableStack). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    clearInterval(this.sweepTimer);
    clearInterval(this.releaseTimer);
    if (this.dependencies.ownsHealth) await this.dependencies.health?.close();
    await this.repository.close();
  }

  // --- authorize ---------------------------------------------------------------------------------------

  async authorize(request: AuthorizeRequest): Promise<AuthorizeResult> {
    if (!request.virtualKey) {
      return authorizeAnonymous(this.dependencies.client, {
        ...request,
        targets: this.aliased(request.targets, undefined),
      });
    }
    checkRequiredHeaders(this.dependencies.client, request.headerNames);
    const key = await this.repository.findVirtualKey(request.virtualKey);
    const now = this.now();
    try {
      assertKeyUsable(key, now);
      const identity = this.identityOf(key);
      if (request.kind !== 'llm') return { targets: [], ...identity };
      const targets = planTargets(key, this.aliased(request.targets, key.model_aliases), {
        random: this.random,
        health: this.dependencies.health,
      });
      return { ...(await this.admit(key, targets, request, now)), ...identity };
    } catch (error) {
      // A known key refused (inactive, expired, a model, a limit): the refusal names it and its owners.
      throw key ? refusedFor(error, this.identityOf(key)) : error;
    }
  }

  /** What an authorization says of the key: its id and name, MCP tools, content opt-out and charged owners. */
  private identityOf(key: StoredVirtualKey) {
    return {
      virtualKeyId: key.id,
      virtualKeyName: key.name,
      mcpTools: key.mcp_tools ?? [],
      ...(key.log_content === false ? { logContent: false } : {}),
      ...chargedOwners(this.repository, key),
    };
  }

  /** The requested targets with model aliases resolved (the key's, then the gateway's); as they were without. */
  private aliased(targets: PlanTarget[], keyAliases: ModelAlias[] | undefined): PlanTarget[] {
    const gateway = this.repository.modelAliases();
    if (gateway.length === 0 && !keyAliases?.length) return targets;
    return resolveAliases(targets, { key: keyAliases, gateway }, this.random);
  }

  /**
   * Plans are admitted in one atomic store step: the checks of the hierarchy, the key and each target's
   * provider config, together with the reservation settlement will release.
   */
  private async admit(
    key: StoredVirtualKey,
    targets: ConfiguredTarget[],
    request: AuthorizeRequest,
    now: number,
  ): Promise<AuthorizeResult> {
    const promptTokens = request.estimate?.promptTokens ?? 0;
    const asked = request.estimate?.maxCompletionTokens;
    const maxCompletionTokens = asked ?? this.settings.default_max_completion_tokens;
    const choices = Math.max(1, request.estimate?.choices ?? 1);
    const strict = this.settings.strict_budgets;
    const attempt = (completionTokens: number) =>
      this.admitWith({
        requestId: request.requestId,
        key,
        targets,
        now,
        promptTokens,
        completionTokens,
        choices,
      });
    // Strict: the worst case of every choice, so a budget never goes over. Default: what the request is
    // expected to cost, so concurrent requests count against the balance before any of them settles.
    const first = await attempt(
      strict ? maxCompletionTokens : Math.min(maxCompletionTokens, this.settings.expected_completion_tokens),
    );
    if (first.allowed || !strict || asked !== undefined) return first.answer();
    // A strict request without max_tokens that the budget cannot cover at the default: served with the
    // max_tokens what is left buys (governance sets it), when that is a useful answer.
    const affordable = this.affordableCompletionTokens(first, targets, promptTokens, choices);
    if (affordable < MIN_CAPPED_COMPLETION_TOKENS) return first.answer();
    const capped = await attempt(affordable);
    return capped.allowed ? { ...capped.answer(), maxCompletionTokens: affordable } : capped.answer();
  }

  /** One atomic admission of a plan reserving `completionTokens` per choice; its answer, or its refusal. */
  private async admitWith(options: {
    requestId: string;
    key: StoredVirtualKey;
    targets: ConfiguredTarget[];
    now: number;
    promptTokens: number;
    /** Reserved per choice: also what the sweeper charges if no settle comes. */
    completionTokens: number;
    choices: number;
  }) {
    const { key, targets, now, promptTokens, completionTokens, choices } = options;
    const strict = this.settings.strict_budgets;
    const reserve = Math.max(
      ...targets.map((target) =>
        this.prices.worstCaseMicros(target.model, promptTokens, completionTokens * choices),
      ),
    );
    const checks = admissionChecks({
      repository: this.repository,
      key,
      targets,
      budgets: { reserve, strict, now },
    });
    assertPriced(checks, targets, this.prices);
    const settlement = settlementPlan({
      requestId: options.requestId,
      virtualKeyId: key.id,
      targets,
      checks,
      estimate: { promptTokens, completionTokens: completionTokens * choices },
      deadlineMs: now + this.settings.settle_deadline_ms,
    });
    const payload = JSON.stringify(settlement);
    const result = await this.dependencies.store
      .admit({
        required: checks.required.map(({ check }) => check),
        alternatives: checks.alternatives.map((group) => group.map(({ check }) => check)),
        reservation: { id: settlement.reservationId, deadlineMs: settlement.deadlineMs ?? now, payload },
      })
      .catch((error: unknown) => {
        // A command that timed out may still run once Redis answers again: its reservation would hold
        // budget for a request that was refused, then be charged by the sweeper. Released when Redis is back.
        this.releaseLater(settlement);
        throw error;
      });
    const admitted = result.passing[0];
    if (admitted !== undefined) settlement.reservedProvider = targets[admitted]!.provider;
    // A duplicate admission found another's reservation under this id: its settle reads what that one stored.
    if (result.allowed && !result.duplicate) this.remember(settlement, admitted ?? -1);
    return {
      allowed: result.allowed,
      failed: result.failed,
      checks,
      answer: (): AuthorizeResult => {
        if (!result.allowed) throw admissionRefusal({ failed: result.failed, ...checks, now });
        return {
          targets: result.passing.map((index) => withoutConfig(targets[index]!)),
          virtualKeyId: key.id,
          settlement,
        };
      },
    };
  }

  /**
   * Completion tokens per choice the failing budget of a refused strict admission still buys after the
   * prompt, at the dearest of the plan's models; 0 when the refusal was not a budget's.
   */
  private affordableCompletionTokens(
    refused: {
      failed?: { group: number; index: number; current: number } | undefined;
      checks: AdmissionChecks;
    },
    targets: ConfiguredTarget[],
    promptTokens: number,
    choices: number,
  ): number {
    const { failed, checks } = refused;
    if (!failed) return 0;
    const failing = (failed.group === -1 ? checks.required : checks.alternatives[failed.group])?.[
      failed.index
    ];
    if (failing?.meaning.kind !== 'budget') return 0;
    const room = failing.check.limit - failed.current;
    const prices = targets.map((target) => this.prices.price(target.model));
    const promptCost = Math.max(...prices.map((price) => (price?.input ?? 0) * promptTokens));
    const outputPrice = Math.max(...prices.map((price) => price?.output ?? 0));
    if (outputPrice === 0) return 0;
    return Math.max(0, Math.floor((room - promptCost) / (outputPrice * choices)));
  }

  // --- settle ------------------------------------------------------------------------------------------

  /**
   * Charges a request against the reservation admission recorded: the plan (counters, reserved amounts, the
   * admitted alternative) is the stored one, never the caller's copy, so a forged or stale plan cannot hand a
   * budget back; a reservation that is not open (settled already, or never made here) is refused, and the
   * store applies a settle once however many race.
   */
  async settle(request: SettleRequest): Promise<SettleResult> {
    // The same reservation settled again while its settle runs here (a retry racing its first try) gets that
    // settle's answer: the store would apply it once anyway.
    const id = request.settlement.reservationId;
    const running = this.settling.get(id);
    if (running) return running;
    const settling = this.settleOnce(request).finally(() => this.settling.delete(id));
    this.settling.set(id, settling);
    return settling;
  }

  private async settleOnce(request: SettleRequest): Promise<SettleResult> {
    const id = request.settlement.reservationId;
    const unsettled = () => notFound(`open reservation ${id} (settled already, or never made)`);
    // What this process admitted it knows as it stored it; anything else is read back, through its schema.
    const remembered = this.admitted.get(id);
    this.admitted.delete(id);
    const stored = remembered ?? (await this.dependencies.store.readReservation(id));
    if (!stored) throw unsettled();
    const plan: SettlementPlan =
      'plan' in stored ? stored.plan : settlementPlanSchema.parse(JSON.parse(stored.payload));
    const reservedProvider = plan.alternativeProviders[stored.alternative];
    const settlement = reservedProvider === undefined ? plan : { ...plan, reservedProvider };
    const { adjustments, chargedMicros } = settlementAdjustments({ ...request, settlement }, this.prices);
    const applied = await this.dependencies.store.settleReservation({ id, adjustments });
    // Settled already (by the sweeper, or another settle of it): as a read would have found nothing.
    if (!applied && remembered) throw unsettled();
    if (applied && request.provider) {
      this.dependencies.metrics?.cost.inc(
        { provider: request.provider, model: modelLabel(request.model) },
        this.prices.costMicros(request.model, request.usage) / 1_000_000,
      );
    }
    return { cost: chargedMicros / 1_000_000 };
  }

  /**
   * Keeps what admission stored for a reservation until its settle (the oldest forgotten past the bound): the
   * plan itself, so a settle here parses nothing.
   */
  private remember(plan: SettlementPlan, alternative: number): void {
    if (this.admitted.size >= REMEMBERED_RESERVATIONS) {
      const oldest = this.admitted.keys().next().value;
      if (oldest !== undefined) this.admitted.delete(oldest);
    }
    this.admitted.set(plan.reservationId, { plan, alternative });
  }

  /**
   * Releases, every second until Redis answers, the reservations of admissions that failed without an answer
   * (at most UNANSWERED_LIMIT kept: past it the sweeper's estimate is the fallback). A reservation that does not
   * exist (the admission never ran) is simply dropped.
   */
  private releaseLater(settlement: SettlementPlan): void {
    if (this.unanswered.size >= UNANSWERED_LIMIT) return;
    this.unanswered.set(settlement.reservationId, settlement);
    if (this.releaseTimer) return;
    this.releaseTimer = setInterval(() => {
      for (const [id, plan] of this.unanswered) {
        this.settle({ requestId: id, settlement: plan, provider: '', model: '', usage: EMPTY_USAGE }).then(
          () => this.unanswered.delete(id),
          (error: unknown) => {
            if (error instanceof GatewayError && error.type === 'not_found') this.unanswered.delete(id);
          },
        );
      }
      if (this.unanswered.size === 0) {
        clearInterval(this.releaseTimer);
        this.releaseTimer = undefined;
      }
    }, 1_000);
    this.releaseTimer.unref();
  }

  /** Charges reservations whose Settle never came (a process died mid-request) at their estimate. */
  sweep(): Promise<number> {
    return sweepUnsettled({
      store: this.dependencies.store,
      logger: this.dependencies.logger,
      now: this.now(),
      settle: (request) => this.settle(request),
    });
  }

  // --- management --------------------------------------------------------------------------------------

  manage<Request extends ManageRequest>(request: Request): Promise<ManageResults[Request['action']]>;
  manage(request: ManageRequest): Promise<ManageResult> {
    return manageResources(
      { repository: this.repository, writes: this.writes, store: this.dependencies.store, now: this.now },
      request,
    );
  }

  private async seed(): Promise<void> {
    if (this.dependencies.governance) await seedGovernance(this.writes, this.dependencies.governance);
  }
}
