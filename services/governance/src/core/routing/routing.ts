import {
  GatewayError,
  type GovernanceSettings,
  type Live,
  type Logger,
  type ModelAlias,
  type RoutingCandidate,
  type RoutingDecision,
  type RoutingObjective,
  type RoutingStrategy,
} from '@gw/shared';
import { healthId } from '@gw/shared/health';
import type { Store } from '@gw/shared/store';
import { budgetChecks, hierarchy, type Level, rateLimitChecks } from '../admission-checks.ts';
import type { AuthorizeRequest, PlanTarget } from '../governance-messages.ts';
import type { GovernanceRepository } from '../governance-repository.ts';
import { resolveAliases } from '../model-aliases.ts';
import { type ConfiguredTarget, type HealthView, planTargets } from '../plan-targets.ts';
import type { PriceCatalog } from '../pricing.ts';
import type { StoredProviderConfig, StoredVirtualKey } from '../resources.ts';
import type { OwnerVariables, RoutingVariables } from './rule-expression.ts';
import { type RuleScopes, RuleSet, type StoredRoutingRule } from './rule-set.ts';
import { type Candidate, orderByStrategy, type StrategyInputs } from './strategies.ts';

export interface RoutingDependencies {
  repository: GovernanceRepository;
  store: Store;
  prices: PriceCatalog;
  settings: Live<GovernanceSettings>;
  health?: HealthView | undefined;
  random: () => number;
  now: () => number;
  logger?: Logger | undefined;
}

/** A plan and why: the targets in order, and the decision the log record and the answer's header carry. */
export interface Routed<Target> {
  targets: Target[];
  decision: RoutingDecision;
}

type Skipped = RoutingDecision['skipped_rules'];

/** A rule's expression that fails at a request is logged at most this often (per rule), then skipped quietly. */
const WARN_INTERVAL_MS = 60_000;
const NO_OWNER: OwnerVariables = { id: '', name: '', metadata: {} };

const allows = (config: StoredProviderConfig, model: string) =>
  config.allowed_models.includes('*') || config.allowed_models.includes(model);

/** The key's provider config that allows this target: the boundary no rule routes around. */
function configFor(key: StoredVirtualKey, provider: string, model: string): StoredProviderConfig | undefined {
  const config = key.provider_configs.find((candidate) => candidate.provider === provider);
  return config && allows(config, model) ? config : undefined;
}

function splitTarget(model: string): { provider: string; model: string } {
  const slash = model.indexOf('/');
  return { provider: model.slice(0, slash), model: model.slice(slash + 1) };
}

const LEVEL_NAMES: Partial<Record<Level, string>> = {
  virtual_key: 'key',
  team: 'team',
  customer: 'customer',
  user: 'user',
  business_unit: 'business_unit',
};

/**
 * Where a request goes (docs/routing.md): the first routing rule of its scopes whose expression holds sends
 * it to the rule's targets by the rule's strategy; without one, model aliases and the key's provider configs
 * by their strategies, as before rules. The key's providers and models stay a hard boundary: a rule target
 * the key does not allow is skipped, and a rule none of whose targets it allows is passed over. Every plan
 * comes with its decision: the rule, the strategy, each candidate's score or why it was skipped.
 */
export class Routing {
  private readonly dependencies: RoutingDependencies;
  private readonly rules = new RuleSet();
  private readonly warned = new Map<string, number>();

  constructor(dependencies: RoutingDependencies) {
    this.dependencies = dependencies;
  }

  /** The plan of a request with a virtual key, within what the key allows. */
  async planForKey(
    key: StoredVirtualKey,
    request: AuthorizeRequest,
    scopes: RuleScopes,
  ): Promise<Routed<ConfiguredTarget>> {
    const skipped: Skipped = [];
    const matched = await this.matchRule(request, { key, scopes }, skipped);
    if (matched) {
      const targets = matched.targets.flatMap((target) => {
        const config = configFor(key, target.provider, target.model);
        return config ? [{ ...target, keyIds: config.key_ids, config }] : [];
      });
      return this.fitted({ targets, decision: { ...matched.decision, skipped_rules: skipped } }, request);
    }
    let explained: { strategy: RoutingStrategy; candidates: RoutingCandidate[] } | undefined;
    const aliased = this.aliased(request, key.model_aliases, (chosen) => {
      explained = chosen;
    });
    const strategy = key.routing_strategy;
    const targets = planTargets(key, aliased, {
      random: this.dependencies.random,
      health: this.dependencies.health,
      order:
        strategy === undefined && key.routing_objective === undefined
          ? undefined
          : (eligible, model) => {
              const ordered = this.order(
                eligible.map((config) => ({
                  item: config,
                  provider: config.provider,
                  model,
                  weight: config.weight,
                })),
                { strategy: strategy ?? 'weighted', objective: key.routing_objective, request },
              );
              explained = { strategy: strategy ?? 'weighted', candidates: ordered.explained };
              return ordered.ordered;
            },
    });
    return this.unruledPlan(targets, { explained, strategy, skipped, request });
  }

  /** The plan of a request without a virtual key: global rules and the gateway's aliases, no boundary. */
  async planAnonymous(request: AuthorizeRequest): Promise<Routed<PlanTarget>> {
    const skipped: Skipped = [];
    const matched = await this.matchRule(request, { scopes: {} }, skipped);
    if (matched)
      return this.fitted({ ...matched, decision: { ...matched.decision, skipped_rules: skipped } }, request);
    let explained: { strategy: RoutingStrategy; candidates: RoutingCandidate[] } | undefined;
    const targets = this.aliased(request, undefined, (chosen) => {
      explained = chosen;
    });
    return this.unruledPlan(targets, { explained, strategy: undefined, skipped, request });
  }

  /**
   * The first rule of the request's scopes that holds and leaves a target the key allows: its targets by its
   * strategy, then its fallbacks, then the request's own fallbacks (those the key allows). A rule whose
   * expression fails is logged and skipped; one whose targets the key allows none of is skipped too.
   */
  private async matchRule(
    request: AuthorizeRequest,
    caller: { key?: StoredVirtualKey | undefined; scopes: RuleScopes },
    skipped: Skipped,
  ): Promise<Routed<PlanTarget> | undefined> {
    const routing = request.routing;
    if (!routing) return undefined;
    const rules = this.rules.rulesFor(this.dependencies.repository.routingRules(), caller.scopes);
    if (rules.length === 0) return undefined;
    const { key } = caller;
    const allowed = (target: { provider: string; model: string }) =>
      !key || configFor(key, target.provider, target.model) !== undefined;
    let variables: RoutingVariables | undefined;
    let usageRead = false;
    for (const { rule, expression } of rules) {
      variables ??= this.variables(request, caller);
      if (expression.reads.usage && !usageRead && key) {
        variables.usage = await this.usage(key);
        usageRead = true;
      }
      if (expression.reads.targets) variables.targets = this.targetSignals(rule);
      let holds: boolean;
      try {
        holds = expression.matches(variables);
      } catch (error) {
        const message = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
        skipped.push({ id: rule.id, name: rule.name, reason: 'error', error: message.slice(0, 500) });
        this.warn(rule, message);
        continue;
      }
      if (!holds) continue;
      const permitted = rule.targets.filter(allowed);
      if (permitted.length === 0) {
        skipped.push({ id: rule.id, name: rule.name, reason: 'boundary' });
        continue;
      }
      const ordered = this.order(
        permitted.map((target) => ({ item: target, ...target })),
        { strategy: rule.strategy, objective: rule.objective, request },
      );
      const targets: PlanTarget[] = ordered.ordered.map(({ provider, model }) => ({ provider, model }));
      const later = [...rule.fallbacks.map(splitTarget), ...request.targets.slice(1)];
      for (const fallback of later) {
        const duplicate = targets.some(
          (target) => target.provider === fallback.provider && target.model === fallback.model,
        );
        if (!duplicate && fallback.provider !== '' && allowed(fallback))
          targets.push({ provider: fallback.provider, model: fallback.model });
      }
      const refused: RoutingCandidate[] = rule.targets
        .filter((target) => !allowed(target))
        .map(({ provider, model }) => ({
          provider,
          model,
          skipped: 'boundary',
          detail: 'not allowed by the virtual key',
        }));
      return {
        targets: rule.strategy === 'cache_affinity' ? this.withAffinity(targets, request) : targets,
        decision: {
          rule: { id: rule.id, name: rule.name, scope: rule.scope },
          strategy: rule.strategy,
          candidates: [...ordered.explained, ...refused],
          skipped_rules: [],
        },
      };
    }
    return undefined;
  }

  /** The requested targets with aliases resolved; an alias with a strategy orders its models by it. */
  private aliased(
    request: AuthorizeRequest,
    keyAliases: ModelAlias[] | undefined,
    chose: (explained: { strategy: RoutingStrategy; candidates: RoutingCandidate[] }) => void,
  ): PlanTarget[] {
    const gateway = this.dependencies.repository.modelAliases();
    if (gateway.length === 0 && !keyAliases?.length) return request.targets;
    return resolveAliases(
      request.targets,
      { key: keyAliases, gateway },
      this.dependencies.random,
      (alias) => {
        if (alias.strategy === undefined && alias.objective === undefined) return undefined;
        const strategy = alias.strategy ?? 'weighted';
        const ordered = this.order(
          alias.targets.map((target) => ({
            item: target,
            ...splitTarget(target.model),
            weight: target.weight,
          })),
          { strategy, objective: alias.objective, request },
        );
        chose({ strategy, candidates: ordered.explained });
        return ordered.ordered;
      },
    );
  }

  private order<Item>(
    candidates: Array<Candidate<Item>>,
    options: {
      strategy: RoutingStrategy;
      objective?: RoutingObjective | undefined;
      request: AuthorizeRequest;
    },
  ) {
    const { request } = options;
    const settings = this.dependencies.settings.current();
    const inputs: StrategyInputs = {
      strategy: options.strategy,
      objective: options.objective,
      health: this.dependencies.health,
      prices: this.dependencies.prices,
      estimate: {
        promptTokens: request.estimate?.promptTokens ?? 0,
        prefixTokens: request.routing?.prefixTokens ?? 0,
        completionTokens: request.estimate?.maxCompletionTokens ?? settings.expected_completion_tokens,
      },
      // Read only for cache_affinity: the ingress hashes the prefix when it is read.
      affinity: options.strategy === 'cache_affinity' ? request.routing?.affinity : undefined,
      random: this.dependencies.random,
    };
    return orderByStrategy(candidates, inputs);
  }

  /** cache_affinity: the router picks each target's provider key by the prefix's hash too. */
  private withAffinity<Target extends PlanTarget>(targets: Target[], request: AuthorizeRequest): Target[] {
    const affinity = request.routing?.affinity;
    return affinity === undefined ? targets : targets.map((target) => ({ ...target, affinity }));
  }

  /**
   * A plan no rule made: with cache_affinity (the alias's, else the key's) each target carries the prefix hash
   * for the router's key choice; then the context-window pre-check.
   */
  private unruledPlan<Target extends PlanTarget>(
    targets: Target[],
    options: {
      explained: { strategy: RoutingStrategy; candidates: RoutingCandidate[] } | undefined;
      strategy: RoutingStrategy | undefined;
      skipped: Skipped;
      request: AuthorizeRequest;
    },
  ): Routed<Target> {
    const { explained, request } = options;
    const affine = (explained?.strategy ?? options.strategy) === 'cache_affinity';
    return this.fitted(
      {
        targets: affine ? this.withAffinity(targets, request) : targets,
        decision: this.unruled(targets, explained, options.skipped),
      },
      request,
    );
  }

  /** The decision without a rule: what the strategy explained, or the plan's targets as they stand. */
  private unruled(
    targets: PlanTarget[],
    explained: { strategy: RoutingStrategy; candidates: RoutingCandidate[] } | undefined,
    skipped: Skipped,
  ): RoutingDecision {
    const health = this.dependencies.health;
    return {
      rule: null,
      strategy: explained?.strategy ?? 'weighted',
      candidates:
        explained?.candidates ??
        targets.map(({ provider, model }) => ({
          provider,
          model,
          state: health?.stateOf(healthId.model(provider, model)) ?? 'healthy',
        })),
      skipped_rules: skipped,
    };
  }

  /**
   * Context-window pre-check: a target whose model's window (governance.pricing `context_window`) is smaller
   * than the request's prompt is left out, not sent a request that must fail; when every target is too small
   * the request is refused with a 400 that says so.
   */
  private fitted<Target extends PlanTarget>(
    routed: Routed<Target>,
    request: AuthorizeRequest,
  ): Routed<Target> {
    const prompt = request.estimate?.promptTokens ?? 0;
    if (prompt === 0) return routed;
    const windowOf = (target: PlanTarget) => this.dependencies.prices.listPrice(target)?.context_window;
    const tooSmall = (target: PlanTarget) => {
      const window = windowOf(target);
      return window !== undefined && window < prompt;
    };
    if (!routed.targets.some(tooSmall)) return routed;
    const targets = routed.targets.filter((target) => !tooSmall(target));
    if (targets.length === 0) {
      throw new GatewayError({
        type: 'invalid_request',
        code: 'context_length_exceeded',
        param: 'messages',
        message: `the request's prompt (about ${prompt} tokens) is larger than the context window of every model it may go to (${routed.targets.map((target) => `${target.provider}/${target.model}: ${windowOf(target)}`).join(', ')})`,
      });
    }
    const candidates = routed.decision.candidates.map((candidate) =>
      tooSmall(candidate)
        ? {
            ...candidate,
            skipped: 'context_window' as const,
            detail: `context window ${windowOf(candidate)} < prompt ≈ ${prompt} tokens`,
          }
        : candidate,
    );
    return { targets, decision: { ...routed.decision, candidates } };
  }

  private variables(
    request: AuthorizeRequest,
    caller: { key?: StoredVirtualKey | undefined; scopes: RuleScopes },
  ): RoutingVariables {
    const routing = request.routing!;
    const requested = request.targets[0] ?? { provider: '', model: '' };
    const owners: Partial<Record<string, OwnerVariables>> = {};
    if (caller.key) {
      for (const { level, owner } of hierarchy(this.dependencies.repository, caller.key)) {
        const name = LEVEL_NAMES[level];
        if (!name) continue;
        const metadata = (owner as { metadata?: Record<string, string> | undefined }).metadata ?? {};
        owners[name] = { id: owner.id, name: owner.name, metadata };
      }
    }
    return {
      request_type: routing.requestType,
      model: requested.model,
      provider: requested.provider,
      stream: routing.stream,
      params: routing.params,
      headers: routing.headers,
      key: owners['key'] ?? NO_OWNER,
      team: owners['team'] ?? NO_OWNER,
      customer: owners['customer'] ?? NO_OWNER,
      user: owners['user'] ?? NO_OWNER,
      business_unit: owners['business_unit'] ?? NO_OWNER,
      tokens: BigInt(request.estimate?.promptTokens ?? 0),
      usage: {},
      targets: {},
    };
  }

  /**
   * Budget and rate-limit use of the key and its owners in percent (the highest of each kind at each level,
   * and over all levels): one store read, made only for a rule that names `usage`.
   */
  private async usage(key: StoredVirtualKey): Promise<Record<string, unknown>> {
    const now = this.dependencies.now();
    const current = { reserve: 0, strict: false, now };
    const levels = hierarchy(this.dependencies.repository, key).map(({ level, owner }) => ({
      name: LEVEL_NAMES[level] ?? level,
      checks: [
        ...budgetChecks(owner, level, current),
        ...(level === 'virtual_key'
          ? rateLimitChecks({ id: key.id, name: key.name, level }, key.rate_limit, now)
          : []),
      ],
    }));
    const values = await this.dependencies.store.readCounters(
      levels.flatMap(({ checks }) => checks.map(({ check }) => check)),
    );
    const usage: Record<string, unknown> = {};
    const overall = { budget_percent: 0, requests_percent: 0, tokens_percent: 0 };
    let offset = 0;
    for (const { name, checks } of levels) {
      const percents = { budget_percent: 0, requests_percent: 0, tokens_percent: 0 };
      for (const { check, meaning } of checks) {
        const used = values[offset++] ?? 0;
        const percent = check.limit > 0 ? (used / check.limit) * 100 : 0;
        const field = `${meaning.kind}_percent` as keyof typeof percents;
        percents[field] = Math.max(percents[field], percent);
        overall[field] = Math.max(overall[field], percent);
      }
      usage[name] = percents;
    }
    return { ...overall, ...usage };
  }

  /** The live signals of a rule's targets, by `provider/model` (docs/routing.md "Variables"). */
  private targetSignals(rule: StoredRoutingRule): Record<string, unknown> {
    const health = this.dependencies.health;
    const signals: Record<string, unknown> = {};
    for (const { provider, model } of [...rule.targets, ...rule.fallbacks.map(splitTarget)]) {
      const live = health?.signals(healthId.model(provider, model));
      signals[`${provider}/${model}`] = {
        state: live?.state ?? 'healthy',
        inflight: live?.inflight ?? 0,
        latency_p95_ms: live?.latencyP95Ms ?? 0,
        ttft_p95_ms: live?.ttftP95Ms ?? 0,
        headroom: live?.headroom ?? 1,
      };
    }
    return signals;
  }

  private warn(rule: StoredRoutingRule, message: string): void {
    const now = this.dependencies.now();
    if (now - (this.warned.get(rule.id) ?? -Infinity) < WARN_INTERVAL_MS) return;
    if (this.warned.size >= 1_000) this.warned.clear();
    this.warned.set(rule.id, now);
    this.dependencies.logger?.warn(
      { rule: rule.id, name: rule.name, error: message },
      'routing rule failed to evaluate; skipped',
    );
  }
}
