import { randomUUID } from 'node:crypto';
import { type ClientConfig, type GatewayConfig, invalidRequest, type Logger, notFound } from '@gw/shared';
import type { Store } from '@gw/shared/store';
import { type AdmissionCheck, budgetChecks, hierarchy, rateLimitChecks } from './admission-checks.ts';
import { authorizeAnonymous, checkRequiredHeaders } from './anonymous.ts';
import { settlementPlanSchema } from './governance-messages.ts';
import { GovernanceRepository } from './governance-repository.ts';
import type {
  AuthorizeRequest,
  AuthorizeResult,
  GovernanceService,
  ManageRequest,
  SettlementPlan,
  SettleRequest,
} from './governance-service.ts';
import { type ConfiguredTarget, planTargets, withoutConfig } from './plan-targets.ts';
import { PriceCatalog } from './pricing.ts';
import { admissionRefusal, assertKeyUsable } from './refusal-errors.ts';
import { COLLECTIONS, type StoredVirtualKey } from './resources.ts';
import { seedGovernance } from './seeding.ts';
import { settlementAdjustments, settlementCounters, sweptSettle } from './settlement.ts';
import { usageReport } from './usage-report.ts';

export interface GovernanceCoreDependencies {
  store: Store;
  logger: Logger;
  client: ClientConfig;
  /** The config file's governance section: resources to seed, prices, budget settings. */
  governance?: GatewayConfig['governance'];
  now?: () => number;
  random?: () => number;
}

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
    const now = this.now();
    assertKeyUsable(key, now);
    const identity = { virtualKeyId: key.id, virtualKeyName: key.name, mcpTools: key.mcp_tools ?? [] };
    if (request.kind !== 'llm') return { targets: [], ...identity };
    const targets = planTargets(key, request.targets, this.random);
    return { ...(await this.admit(key, targets, request, now)), ...identity };
  }

  /**
   * Every budget of the hierarchy and the key's limits (required), and each target's provider-config
   * budgets and limits (alternatives: the first that passes serves), admitted in one atomic store step
   * together with the reservation settlement will release.
   */
  private async admit(
    key: StoredVirtualKey,
    targets: ConfiguredTarget[],
    request: AuthorizeRequest,
    now: number,
  ): Promise<AuthorizeResult> {
    const promptTokens = request.estimate?.promptTokens ?? 0;
    const maxCompletion =
      request.estimate?.maxCompletionTokens ?? this.settings.default_max_completion_tokens;
    const strict = this.settings.strict_budgets;
    const reserve = strict
      ? Math.max(
          ...targets.map((target) => this.prices.worstCaseMicros(target.model, promptTokens, maxCompletion)),
        )
      : 0;
    const budgets = { reserve, strict, now };
    const required: AdmissionCheck[] = [
      ...hierarchy(this.repository, key).flatMap(({ level, owner }) => budgetChecks(owner, level, budgets)),
      ...rateLimitChecks({ id: key.id, name: key.name, level: 'virtual_key' }, key.rate_limit, now),
    ];
    const alternatives = targets.map((target): AdmissionCheck[] => {
      const id = `${key.id}/${target.provider}`;
      const name = `${key.name}/${target.provider}`;
      return [
        ...budgetChecks(
          { ...target.config, id, name, created_at: key.created_at },
          'provider_config',
          budgets,
        ),
        ...rateLimitChecks({ id, name, level: 'provider_config' }, target.config.rate_limit, now),
      ];
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
      required: required.map(({ check }) => check),
      alternatives: alternatives.map((group) => group.map(({ check }) => check)),
      reservation: {
        id: settlement.reservationId,
        deadlineMs: now + this.settings.settle_deadline_ms,
        payload: JSON.stringify(settlement),
      },
    });
    const admitted = result.passing[0];
    if (admitted !== undefined) settlement.reservedProvider = targets[admitted]!.provider;
    if (!result.allowed) throw admissionRefusal({ failed: result.failed, required, alternatives, now });
    return {
      targets: result.passing.map((index) => withoutConfig(targets[index]!)),
      virtualKeyId: key.id,
      settlement,
    };
  }

  // --- settle ------------------------------------------------------------------------------------------

  async settle(request: SettleRequest): Promise<void> {
    await this.dependencies.store.settleReservation({
      id: request.settlement.reservationId,
      adjustments: settlementAdjustments(request, this.prices),
    });
  }

  /** Charges reservations whose Settle never came (a process died mid-request) at their estimate. */
  async sweep(): Promise<number> {
    const due = await this.dependencies.store.dueReservations(this.now(), 200);
    let charged = 0;
    for (const { id, payload, alternative } of due) {
      try {
        const plan = settlementPlanSchema.parse(JSON.parse(payload));
        await this.settle(sweptSettle({ id, plan, alternative }));
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
    const collection = COLLECTIONS.find((name) => name === request.collection);
    if (!collection) throw notFound(`governance resource '${request.collection}'`);
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
        return usageReport({
          store: this.dependencies.store,
          collection,
          resource: existing(),
          now: this.now(),
        });
      default:
        throw invalidRequest(`unknown action '${String(request.action)}'`);
    }
  }

  private async seed(): Promise<void> {
    if (this.dependencies.governance) await seedGovernance(this.repository, this.dependencies.governance);
  }
}
