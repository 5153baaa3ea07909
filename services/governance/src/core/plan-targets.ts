import { GatewayError, invalidRequest } from '@gw/shared';
import { type HealthBoard, healthId } from '@gw/shared/health';

/** What routing reads of provider health: a board (every router replica's view), or a test's double. */
export type HealthView = Pick<HealthBoard, 'weigh' | 'stateOf' | 'signals'>;

import type { PlanTarget } from './governance-service.ts';
import type { StoredProviderConfig, StoredVirtualKey } from './resources.ts';

/** A target of the plan with the provider config of the key that allows it. */
export type ConfiguredTarget = PlanTarget & { config: StoredProviderConfig };

/** How health weighs the candidates of a weighted choice: the board, and the targets each candidate is judged by. */
export interface HealthWeighing<Weighted> {
  board: HealthView;
  ids: (candidate: Weighted) => string[];
}

/**
 * A weighted random first choice, then the rest by weight: the others become ordered fallbacks. With health,
 * each weight is multiplied by its target's health (a Failed one goes last, a fallback: the router moves it
 * first when its probe is due).
 */
export function weightedOrder<Weighted extends { weight: number }>(
  configs: Weighted[],
  options: { random: () => number; health?: HealthWeighing<Weighted> | undefined },
): Weighted[] {
  const byWeight = [...configs].sort((left, right) => right.weight - left.weight);
  let weights = byWeight.map((config) => config.weight);
  const { health } = options;
  if (health && byWeight.length > 1) {
    // No probe here: the router that executes the plan sends a Failed target its probe (it moves it first).
    const weighed = health.board.weigh(
      byWeight.map((config) => ({ ids: health.ids(config), weight: config.weight })),
      { probe: false },
    );
    weights = weighed.weights;
    const order = byWeight.map((config, index) => ({ config, weight: weights[index]! }));
    order.sort((left, right) => right.weight - left.weight);
    byWeight.splice(0, byWeight.length, ...order.map(({ config }) => config));
    weights = order.map(({ weight }) => weight);
  }
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  if (total <= 0) return byWeight;
  let point = options.random() * total;
  let first = byWeight[0]!;
  for (const [index, config] of byWeight.entries()) {
    point -= weights[index]!;
    if (point < 0) {
      first = config;
      break;
    }
  }
  return [first, ...byWeight.filter((config) => config !== first)];
}

/**
 * Targets the key may use, in order: the requested one (or, for a bare model, every provider config that
 * allows it, weighted), then the request's fallbacks the key allows (others are dropped, not fatal).
 */
export function planTargets(
  key: StoredVirtualKey,
  targets: PlanTarget[],
  options: {
    random: () => number;
    health?: HealthView | undefined;
    /** How a bare model's provider configs are ordered (the key's strategy); weighted by health without it. */
    order?: ((eligible: StoredProviderConfig[], model: string) => StoredProviderConfig[]) | undefined;
  },
): ConfiguredTarget[] {
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
    const { health } = options;
    ordered =
      options.order?.(eligible, primary.model) ??
      weightedOrder(eligible, {
        random: options.random,
        health: health && {
          board: health,
          // The provider's model, derived from every key serving it (a provider is not out for another model).
          ids: (config) => [healthId.model(config.provider, primary.model)],
        },
      });
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
  const planned: ConfiguredTarget[] = ordered.map((config) => ({
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
    if (config && allows(config, fallback.model) && !duplicate)
      planned.push({ ...fallback, keyIds: config.key_ids, config });
  }
  return planned;
}

export function withoutConfig(target: ConfiguredTarget): PlanTarget {
  const { provider, model, keyIds, affinity } = target;
  return affinity === undefined ? { provider, model, keyIds } : { provider, model, keyIds, affinity };
}
