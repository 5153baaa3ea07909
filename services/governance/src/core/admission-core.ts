import {
  type ClientConfig,
  GatewayError,
  type GovernanceSettings,
  type Live,
  type Logger,
  type Metrics,
  type PriceOverrides,
  validate,
} from '@gw/shared';
import type { FailedCheck, Store } from '@gw/shared/store';
import { type AdmissionChecks, admissionChecks, chargedOwners } from './admission-checks.ts';
import { authorizeAnonymous, checkRequiredHeaders } from './anonymous.ts';
import { type DryRunRequest, dryRunRequestSchema, type ManageResults } from './governance-messages.ts';
import type { GovernanceRepository } from './governance-repository.ts';
import type {
  Admission,
  AuthorizeRequest,
  AuthorizeResult,
  SettleRequest,
  SettleResult,
} from './governance-service.ts';
import { type ConfiguredTarget, type HealthView, withoutConfig } from './plan-targets.ts';
import { PriceCatalog } from './pricing.ts';
import { admissionRefusal, assertKeyUsable, refusedFor } from './refusal-errors.ts';
import { Reservations } from './reservations.ts';
import type { StoredVirtualKey } from './resources.ts';
import { Routing } from './routing/routing.ts';
import { settlementPlan } from './settlement.ts';

export interface AdmissionCoreDependencies {
  store: Store;
  /** The governance resources, in memory and following the store (started and closed by its owner). */
  repository: GovernanceRepository;
  /** The client settings (required headers, whether keys are mandatory), followed live. */
  client: Live<ClientConfig>;
  /** The governance settings (budget mode, estimates, settle deadline), followed live. */
  settings: Live<GovernanceSettings>;
  /** Price overrides per model (`governance.pricing`, `/api/pricing`), followed live. */
  pricing?: Live<PriceOverrides> | undefined;
  now?: () => number;
  random?: () => number;
  /** Provider health: a key's weighted provider configs follow it (docs/routing-health.md). */
  health?: HealthView | undefined;
  /** `gw_cost_usd_total`: what settled requests were charged. */
  metrics?: Metrics | undefined;
  /** Where a routing rule that fails at a request is reported. */
  logger?: Logger | undefined;
}

/**
 * A dry run's prompt tokens when it names none: four characters a token and a few per message, gw's rule of
 * thumb (the ingress's estimate of a real request walks the same way).
 */
function roughTokens(messages: DryRunRequest['messages']): number {
  let tokens = 3;
  for (const { content } of messages) {
    const text = typeof content === 'string' ? content : JSON.stringify(content ?? '');
    tokens += 4 + Math.ceil(text.length / 4);
  }
  return tokens;
}

/** The model of a pass-through call that names none (files, batches): authorized as every model of the provider. */
const ANY_MODEL = '*';

/** Fewer completion tokens than this are no useful answer: a strict request is refused rather than cut so short. */
const MIN_CAPPED_COMPLETION_TOKENS = 16;

/**
 * A budget only holds if what it pays for has a price: a request under a budget for a model without one is
 * refused (unless the unpriced default says what such models cost) instead of being served for nothing. The
 * refusal says where an operator prices it: the admin API and the console's Pricing page (docs/pricing.md). A
 * pass-through call that names no model (`*`: files, batches) has none to price: what it is charged is read from
 * its answer (a completed batch's usage, priced by the model the batch ran).
 */
function assertPriced(checks: AdmissionChecks, targets: ConfiguredTarget[], prices: PriceCatalog): void {
  const budgeted = [checks.required, ...checks.alternatives].some((group) =>
    group.some(({ meaning }) => meaning.kind === 'budget'),
  );
  if (!budgeted) return;
  const unpriced = targets.find((target) => target.model !== ANY_MODEL && !prices.price(target));
  if (!unpriced) return;
  throw new GatewayError({
    type: 'model_not_allowed',
    message: `model '${unpriced.model}' has no price and a budget applies to this key: set its price with PUT /api/pricing/models/${encodeURIComponent(unpriced.model)} or on the console's Pricing page (or a price for every unpriced model: PUT /api/pricing/unpriced)`,
    provider: unpriced.provider,
    model: unpriced.model,
  });
}

/**
 * Admission: authentication of virtual keys, access to providers and models, hierarchical budgets and rate
 * limits admitted in one atomic store step with the request's reservation, and its exactly-once settle. What a
 * request's path needs of governance, and nothing else: a governance core runs it, and so does a cluster's
 * ingress on its own (`startAdmission`, docs/architecture.md "Admission").
 */
export class AdmissionCore implements Admission {
  private readonly dependencies: AdmissionCoreDependencies;
  private readonly repository: GovernanceRepository;
  private readonly reservations: Reservations;
  private readonly prices: PriceCatalog;
  private readonly routing: Routing;
  private readonly now: () => number;

  constructor(dependencies: AdmissionCoreDependencies) {
    this.dependencies = dependencies;
    this.repository = dependencies.repository;
    this.now = dependencies.now ?? Date.now;
    const random = dependencies.random ?? Math.random;
    this.prices = new PriceCatalog({
      overrides: dependencies.pricing,
      settings: dependencies.settings,
      random,
    });
    this.routing = new Routing({
      repository: this.repository,
      store: dependencies.store,
      prices: this.prices,
      settings: dependencies.settings,
      health: dependencies.health,
      random,
      now: this.now,
      logger: dependencies.logger,
    });
    this.reservations = new Reservations({
      store: dependencies.store,
      prices: this.prices,
      metrics: dependencies.metrics,
    });
  }

  close(): void {
    this.reservations.close();
  }

  async authorize(request: AuthorizeRequest): Promise<AuthorizeResult> {
    if (!request.virtualKey) {
      const client = this.dependencies.client.current();
      // Refused before routing: a request the gateway refuses costs no rule evaluation.
      authorizeAnonymous(client, { ...request, targets: [] });
      if (request.kind !== 'llm') return { targets: [] };
      const routed = await this.routing.planAnonymous(request);
      return {
        ...authorizeAnonymous(client, { ...request, targets: routed.targets }),
        routing: routed.decision,
      };
    }
    checkRequiredHeaders(this.dependencies.client.current(), request.headerNames);
    const key = await this.repository.findVirtualKey(request.virtualKey);
    const now = this.now();
    try {
      assertKeyUsable(key, now);
      const identity = this.identityOf(key);
      if (request.kind !== 'llm') return { targets: [], ...identity };
      const routed = await this.routing.planForKey(key, request, identity);
      return {
        ...(await this.admit(key, routed.targets, request, now)),
        ...identity,
        routing: routed.decision,
      };
    } catch (error) {
      // A known key refused (inactive, expired, a model, a limit): the refusal names it and its owners.
      throw key ? refusedFor(error, this.identityOf(key)) : error;
    }
  }

  /**
   * Where a described request would go and why (docs/routing.md "Dry run"): the routing of a real request,
   * with the key's boundary, without admission (nothing is reserved, counted or called).
   */
  async dryRun(body: unknown): Promise<ManageResults['dry-run']> {
    const input = validate(dryRunRequestSchema, body);
    const slash = input.model.indexOf('/');
    const request: AuthorizeRequest = {
      requestId: 'dry-run',
      kind: 'llm',
      headerNames: Object.keys(input.headers),
      targets: [
        slash > 0
          ? { provider: input.model.slice(0, slash), model: input.model.slice(slash + 1) }
          : { provider: '', model: input.model },
      ],
      estimate: {
        promptTokens: input.tokens ?? roughTokens(input.messages),
        ...(typeof input.params['max_tokens'] === 'number' && {
          maxCompletionTokens: input.params['max_tokens'],
        }),
      },
      routing: {
        requestType: input.request_type,
        stream: input.stream,
        headers: Object.fromEntries(
          Object.entries(input.headers).map(([name, value]) => [name.toLowerCase(), value]),
        ),
        params: input.params,
      },
    };
    if (input.virtual_key_id === undefined) {
      const routed = await this.routing.planAnonymous(request);
      return { decision: routed.decision, targets: routed.targets };
    }
    const key = await this.repository.current('virtual-keys', input.virtual_key_id);
    const routed = await this.routing.planForKey(key, request, this.identityOf(key));
    return { decision: routed.decision, targets: routed.targets.map(withoutConfig) };
  }

  /**
   * Charges a request against the reservation admission recorded (never the caller's copy of the plan);
   * the store applies a settle once however many race (reservations.ts).
   */
  settle(request: SettleRequest): Promise<SettleResult> {
    return this.reservations.settle(request);
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
    const settings = this.dependencies.settings.current();
    const maxCompletionTokens = asked ?? settings.default_max_completion_tokens;
    const choices = Math.max(1, request.estimate?.choices ?? 1);
    const strict = settings.strict_budgets;
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
      strict ? maxCompletionTokens : Math.min(maxCompletionTokens, settings.expected_completion_tokens),
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
    /** Reserved per choice (the expected completion, at most, is what the sweeper charges if no settle comes). */
    completionTokens: number;
    choices: number;
  }) {
    const { key, targets, now, promptTokens, completionTokens, choices } = options;
    const settings = this.dependencies.settings.current();
    const strict = settings.strict_budgets;
    const reserve = Math.max(
      ...targets.map((target) =>
        this.prices.worstCaseMicros(target, promptTokens, completionTokens * choices),
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
      // What a request whose settle never comes is charged when no router reports its calls: the expected
      // answer, not the worst case a strict budget reserves.
      estimate: {
        promptTokens,
        completionTokens: Math.min(completionTokens, settings.expected_completion_tokens) * choices,
      },
      deadlineMs: now + settings.settle_deadline_ms,
    });
    const payload = JSON.stringify(settlement);
    const result = await this.dependencies.store
      .admit({
        required: checks.required.map(({ check }) => check),
        alternatives: checks.alternatives.map((group) => group.map(({ check }) => check)),
        reservation: { id: settlement.reservationId, deadlineMs: settlement.deadlineMs ?? now, payload },
      })
      .catch((error: unknown) => {
        // Its reservation may still be made once Redis answers again: released then.
        this.reservations.releaseLater(settlement);
        throw error;
      });
    const admitted = result.passing[0];
    if (admitted !== undefined) settlement.reservedProvider = targets[admitted]!.provider;
    // A duplicate admission found another's reservation under this id: its settle reads what that one stored.
    if (result.allowed && !result.duplicate) this.reservations.remember(settlement, admitted ?? -1);
    return {
      allowed: result.allowed,
      failed: result.allowed ? undefined : result.failed,
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
   * prompt, at the dearest of the plan's models as admission reserves them (`reserveRates`); 0 when the refusal
   * was not a budget's.
   */
  private affordableCompletionTokens(
    refused: {
      failed?: FailedCheck | undefined;
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
    const rates = targets.map((target) => this.prices.reserveRates(target, promptTokens));
    const promptCost = Math.max(...rates.map((rate) => rate?.fixed ?? 0));
    const outputPrice = Math.max(...rates.map((rate) => rate?.perCompletionToken ?? 0));
    if (outputPrice === 0) return 0;
    return Math.max(0, Math.floor((room - promptCost) / (outputPrice * choices)));
  }
}
