import {
  type RoutingCandidate,
  type RoutingObjective,
  type RoutingStrategy,
  rendezvousScore,
} from '@gw/shared';
import { healthId, type TargetSignals } from '@gw/shared/health';
import { pricesFor } from '../cost-parts.ts';
import { type HealthView, weightedOrder } from '../plan-targets.ts';
import type { ModelPrice, ServedModel } from '../pricing.ts';

/** One place a strategy may send the request: a provider's model, with its configured weight. */
export interface Candidate<Item> {
  item: Item;
  provider: string;
  model: string;
  weight: number;
}

/** What a strategy reads besides its candidates. */
export interface StrategyInputs {
  strategy: RoutingStrategy;
  objective?: RoutingObjective | undefined;
  /** Provider health and live signals (every router replica's, within a recompute); none: all healthy. */
  health?: HealthView | undefined;
  prices: { price(served: ServedModel): ModelPrice | undefined };
  /** gw's estimate of the request: its prompt, the part of it before the last message, its answer. */
  estimate: { promptTokens: number; prefixTokens: number; completionTokens: number };
  /** cache_affinity: the hash of the conversation's prefix (none: the request has no prefix to keep). */
  affinity?: string | undefined;
  random: () => number;
}

export interface Ordered<Item> {
  ordered: Item[];
  /** Each candidate as the decision explains it, in the order chosen. */
  explained: RoutingCandidate[];
}

const NO_SIGNALS: TargetSignals = {
  state: 'healthy',
  latencyP95Ms: undefined,
  ttftP95Ms: undefined,
  inflight: 0,
  requestsPerMinute: 0,
  tokensPerMinute: 0,
  headroom: undefined,
};

interface Scored<Item> {
  candidate: Candidate<Item>;
  signals: TargetSignals;
  /** Higher is better; undefined: nothing known yet (tried first, so it gets measured). */
  score: number | undefined;
  /** Why it goes behind the others (a Failed target, a key pool without headroom, an objective missed). */
  behind?: 'health' | 'limits' | 'objective' | undefined;
  detail?: string | undefined;
}

/**
 * Estimated USD of the request on a model, at the prices it will be billed at: its long-context tier's when the
 * prompt is longer than the tier's threshold (`pricesFor`), the prefix at the cached-input price where there is
 * one.
 */
function estimatedCost(price: ModelPrice, estimate: StrategyInputs['estimate']): number {
  const prices = pricesFor(price, estimate.promptTokens);
  const prefix = Math.min(estimate.prefixTokens, estimate.promptTokens);
  const cachedPrice = prices.cached_input ?? prices.input;
  return (
    ((estimate.promptTokens - prefix) * prices.input +
      prefix * cachedPrice +
      estimate.completionTokens * prices.output) /
    1_000_000
  );
}

/** Recent time to first token, else total latency (a whole answer's first token is its whole). */
const speedOf = (signals: TargetSignals) => signals.ttftP95Ms ?? signals.latencyP95Ms;

function score<Item>(candidate: Candidate<Item>, signals: TargetSignals, inputs: StrategyInputs) {
  switch (inputs.strategy) {
    case 'least_busy':
      return { score: -signals.inflight, detail: `${signals.inflight} in flight` };
    case 'lowest_latency': {
      const speed = speedOf(signals);
      return speed === undefined
        ? { score: undefined, detail: 'no latency measured yet' }
        : { score: -speed, detail: `p95 ${Math.round(speed)} ms` };
    }
    case 'lowest_cost': {
      const price = inputs.prices.price(candidate);
      if (!price) return { score: -Infinity, detail: 'no price' };
      const cost = estimatedCost(price, inputs.estimate);
      return { score: -cost, detail: `≈ $${cost.toPrecision(3)}` };
    }
    case 'usage': {
      const headroom = signals.headroom ?? 1;
      return {
        score: headroom,
        detail: signals.headroom === undefined ? 'no limit' : `${Math.round(headroom * 100)}% of limits left`,
      };
    }
    case 'cache_affinity': {
      if (inputs.affinity === undefined) return { score: candidate.weight, detail: 'no prefix: weighted' };
      // Weighted rendezvous hashing: the same prefix meets the same candidate while it serves.
      const id = `${candidate.provider}/${candidate.model}`;
      return { score: rendezvousScore(inputs.affinity, id, candidate.weight), detail: 'prefix affinity' };
    }
    case 'weighted':
      return { score: candidate.weight };
  }
}

/** Whether a candidate keeps the objective's bounds (nothing measured yet keeps them). */
function objectiveMissed(signals: TargetSignals, objective: RoutingObjective): string | undefined {
  const ttft = signals.ttftP95Ms ?? signals.latencyP95Ms;
  if (objective.max_ttft_p95_ms !== undefined && ttft !== undefined && ttft > objective.max_ttft_p95_ms)
    return `ttft p95 ${Math.round(ttft)} ms > ${objective.max_ttft_p95_ms} ms`;
  const latency = signals.latencyP95Ms;
  if (
    objective.max_latency_p95_ms !== undefined &&
    latency !== undefined &&
    latency > objective.max_latency_p95_ms
  )
    return `latency p95 ${Math.round(latency)} ms > ${objective.max_latency_p95_ms} ms`;
  return undefined;
}

const BEHIND_RANK = { objective: 1, limits: 2, health: 3 } as const;
const rankOf = (entry: { behind?: keyof typeof BEHIND_RANK | undefined }) =>
  entry.behind === undefined ? 0 : BEHIND_RANK[entry.behind];

/** Best first: known scores by value, the unmeasured before them (tried so they get measured), ties at random. */
function byScore<Item>(left: Scored<Item>, right: Scored<Item>): number {
  const rank = rankOf(left) - rankOf(right);
  if (rank !== 0) return rank;
  if (left.score === undefined || right.score === undefined)
    return left.score === right.score ? 0 : left.score === undefined ? -1 : 1;
  return right.score - left.score;
}

/**
 * The candidates in the order to try them under a strategy (docs/routing.md "Strategies"), each explained.
 * Every strategy is health-aware: a Failed candidate goes behind the others (the router still sends it its
 * probe when due), as does one whose provider keys have no headroom left; with an objective, the candidates
 * that miss it go behind those that keep it, and when none keeps it the fastest comes first.
 */
export function orderByStrategy<Item>(
  candidates: ReadonlyArray<Candidate<Item>>,
  inputs: StrategyInputs,
): Ordered<Item> {
  if (inputs.strategy === 'weighted' && !inputs.objective) return weighted(candidates, inputs);
  const { health, objective } = inputs;
  const scored: Array<Scored<Item>> = candidates.map((candidate) => {
    const signals = health?.signals(healthId.model(candidate.provider, candidate.model)) ?? NO_SIGNALS;
    const entry: Scored<Item> = { candidate, signals, ...score(candidate, signals, inputs) };
    if (signals.state === 'failed') entry.behind = 'health';
    else if (signals.headroom !== undefined && signals.headroom <= 0) entry.behind = 'limits';
    else if (objective) {
      const missed = objectiveMissed(signals, objective);
      if (missed) {
        entry.behind = 'objective';
        entry.detail = missed;
      }
    }
    return entry;
  });
  // Shuffled first, so the stable sort breaks ties at random (two unmeasured targets share the load).
  for (let index = scored.length - 1; index > 0; index--) {
    const other = Math.floor(inputs.random() * (index + 1));
    [scored[index], scored[other]] = [scored[other]!, scored[index]!];
  }
  scored.sort(byScore);
  if (objective && scored.every((entry) => entry.behind !== undefined && entry.behind !== 'health')) {
    // No candidate keeps the objective: the fastest serves.
    scored.sort((left, right) => (speedOf(left.signals) ?? 0) - (speedOf(right.signals) ?? 0));
  }
  // Everything behind: the least bad order of the strategy stands (nothing is skipped for good).
  const allBehind = scored.every((entry) => entry.behind !== undefined);
  return {
    ordered: scored.map((entry) => entry.candidate.item),
    explained: scored.map((entry) => ({
      provider: entry.candidate.provider,
      model: entry.candidate.model,
      ...(entry.score !== undefined && Number.isFinite(entry.score) && { score: round(entry.score) }),
      state: entry.signals.state,
      ...(entry.behind !== undefined && !allBehind && { skipped: entry.behind }),
      ...(entry.detail !== undefined && { detail: entry.detail }),
    })),
  };
}

/** Today's weighted choice (health-weighted random first, the rest by weight), explained. */
function weighted<Item>(candidates: ReadonlyArray<Candidate<Item>>, inputs: StrategyInputs): Ordered<Item> {
  const { health } = inputs;
  const ordered = weightedOrder([...candidates], {
    random: inputs.random,
    health: health && {
      board: health,
      ids: (candidate) => [healthId.model(candidate.provider, candidate.model)],
    },
  });
  const failed = (candidate: Candidate<Item>) =>
    health?.stateOf(healthId.model(candidate.provider, candidate.model)) === 'failed';
  const allFailed = ordered.every(failed);
  return {
    ordered: ordered.map((candidate) => candidate.item),
    explained: ordered.map((candidate) => ({
      provider: candidate.provider,
      model: candidate.model,
      score: candidate.weight,
      state: health?.stateOf(healthId.model(candidate.provider, candidate.model)) ?? 'healthy',
      ...(failed(candidate) && !allFailed && { skipped: 'health' as const }),
    })),
  };
}

const round = (value: number) => Math.round(value * 1e6) / 1e6;
