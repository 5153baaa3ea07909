import type { WindowStats } from './health-window.ts';
import type { LoadBalancerConfig } from './load-balancer-config.ts';

/** Target health (docs/routing-health.md): healthy, Degraded above 2 % errors, Failed above 5 %, then recovering. */
export const HEALTH_STATES = ['healthy', 'degraded', 'failed', 'recovering'] as const;
export type HealthState = (typeof HEALTH_STATES)[number];

/** A state as a gauge value (`gw_provider_health`, `gw_target_health_state`). */
export const HEALTH_STATE_VALUE: Record<HealthState, number> = {
  healthy: 1,
  degraded: 0.5,
  recovering: 0.25,
  failed: 0,
};

export interface TargetState {
  state: HealthState;
  /** When the state began (epoch ms). */
  since: number;
  /** Buckets before this are not counted: what a target did before it recovered is not held against it. */
  countFrom: number;
}

/** Measurements a state is decided on: the window since `countFrom`, and what came after a failure. */
export interface StateInputs {
  window: WindowStats;
  /** Requests and failures in the buckets after the one that saw the target fail (its probes). */
  afterFailure: { requests: number; failures: number };
}

/**
 * The next state of a target. A verdict needs `min_samples` requests in the window; a Failed target recovers
 * after `recovery_successes` probes without a failure (a failed probe starts the count again), and a
 * recovering one is healthy after `recovery_ms` unless it fails again meanwhile.
 */
export function nextState(
  current: TargetState,
  inputs: StateInputs,
  config: LoadBalancerConfig,
  now: number,
): TargetState {
  const { window, afterFailure } = inputs;
  if (current.state === 'failed') {
    if (afterFailure.failures > 0) return { ...current, since: now };
    if (afterFailure.requests >= config.recovery_successes) {
      return { state: 'recovering', since: now, countFrom: now };
    }
    return current;
  }
  const judged = window.requests >= config.min_samples;
  if (current.state === 'recovering') {
    if (window.requests >= config.recovery_successes && window.errorRate > config.failed_error_rate) {
      return { ...current, state: 'failed', since: now };
    }
    if (now - current.since >= config.recovery_ms) return { ...current, state: 'healthy', since: now };
    return current;
  }
  const measured: HealthState = !judged
    ? 'healthy'
    : window.errorRate > config.failed_error_rate
      ? 'failed'
      : window.errorRate > config.degraded_error_rate
        ? 'degraded'
        : 'healthy';
  return measured === current.state ? current : { ...current, state: measured, since: now };
}

export interface ScoreParts {
  errorRate: number;
  latency: number;
  utilization: number;
  momentum: number;
}

/**
 * The penalty parts, each 0 (perfect) to 1 (as bad as it gets): the error rate against the Failed threshold,
 * latency against the fastest alternative (`relativeLatency`, 1 = twice as slow or worse), utilization of the
 * configured concurrency, and momentum (errors of the recent third of the window above the whole window's).
 */
export function scoreParts(
  window: WindowStats,
  options: { config: LoadBalancerConfig; relativeLatency: number; utilization: number },
): ScoreParts {
  const { config } = options;
  const threshold = Math.max(config.failed_error_rate, 1e-9);
  const judged = window.requests >= config.min_samples;
  const recentRate = window.recentRequests > 0 ? window.recentFailures / window.recentRequests : 0;
  const trendJudged = window.recentRequests >= Math.max(1, Math.ceil(config.min_samples / 3));
  return {
    errorRate: judged ? Math.min(1, window.errorRate / threshold) : 0,
    latency: clamp01(options.relativeLatency),
    utilization: clamp01(options.utilization),
    momentum: trendJudged ? clamp01((recentRate - window.errorRate) / threshold) : 0,
  };
}

/** 1 − the weighted penalty: 1 is a perfect target, 0 the worst. */
export function scoreOf(parts: ScoreParts, config: LoadBalancerConfig): number {
  const weights = config.score_weights;
  const penalty =
    weights.error_rate * parts.errorRate +
    weights.latency * parts.latency +
    weights.utilization * parts.utilization +
    weights.momentum * parts.momentum;
  return clamp01(1 - penalty);
}

/** Least share a target that may serve keeps: a Degraded target gets less traffic, never none. */
const MIN_SHARE = 0.05;

/**
 * What a target's configured weight is multiplied by: its score; nothing while Failed; while recovering, a
 * penalty that starts whole and falls by 90 % over `recovery_ms` (0.1 ^ (elapsed / recovery_ms)).
 */
export function weightMultiplier(
  state: TargetState,
  score: number,
  options: { config: LoadBalancerConfig; now: number },
): number {
  if (state.state === 'failed') return 0;
  const share = Math.max(MIN_SHARE, score);
  if (state.state !== 'recovering') return share;
  const elapsed = Math.max(0, options.now - state.since);
  const recoveryPenalty = 0.1 ** (elapsed / options.config.recovery_ms);
  return Math.max(MIN_SHARE, share * (1 - recoveryPenalty));
}

function clamp01(value: number): number {
  return Number.isFinite(value) ? Math.min(1, Math.max(0, value)) : 0;
}

/**
 * The state of a provider, a key or a model (provider/model) from the states of the targets (provider, key and
 * model) it is made of: Failed only when every one of them is, recovering when every one is Failed or
 * recovering, Degraded when some are Failed or Degraded (part of it is out), else healthy.
 */
export function derivedState(states: Iterable<HealthState>): HealthState {
  let count = 0;
  let failed = 0;
  let recovering = 0;
  let degraded = 0;
  for (const state of states) {
    count++;
    if (state === 'failed') failed++;
    else if (state === 'recovering') recovering++;
    else if (state === 'degraded') degraded++;
  }
  if (count === 0) return 'healthy';
  if (failed === count) return 'failed';
  if (failed + recovering === count) return 'recovering';
  return failed + degraded > 0 ? 'degraded' : 'healthy';
}
