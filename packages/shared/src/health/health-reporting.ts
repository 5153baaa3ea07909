import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { HealthEntry } from './health-entries.ts';
import type { ProviderHealthReport, TargetHealthReport } from './health-report.ts';
import { HEALTH_STATE_VALUE, type HealthState } from './health-state.ts';

// What a board tells operators: a log line and a count per transition, gauges of providers and keys, and the
// report of `GET /api/health/providers`.

/** A transition's log line and counter, told before the entry takes its new state. */
export function announceTransition(
  entry: HealthEntry,
  change: { to: HealthState; reason: string },
  observers: { logger?: Logger | undefined; metrics?: Metrics | undefined },
): void {
  const { to, reason } = change;
  const from = entry.state.state;
  const { logger, metrics } = observers;
  const name = entry.kind === 'target' ? `${entry.provider}/${entry.name}` : entry.id.slice(2);
  const because =
    reason === 'error rate'
      ? `error rate ${(entry.stats.errorRate * 100).toFixed(1)} % over ${entry.stats.requests} requests`
      : reason;
  logger?.info(
    { target: entry.kind === 'key' ? `${entry.provider} key ${entry.name}` : name, from, to },
    `health: ${entry.kind} ${name} ${from} → ${to} (${because})`,
  );
  // Model names come from callers: metrics carry providers and configured keys only (bounded labels).
  if (entry.kind === 'provider' || entry.kind === 'key')
    metrics?.healthTransitions.inc({ provider: entry.provider, kind: entry.kind, from, to });
}

/** The gauges of a provider or key view (state, score; a provider's health and error rate). */
export function reportGauges(entry: HealthEntry, metrics: Metrics | undefined): void {
  if (!metrics || (entry.kind !== 'provider' && entry.kind !== 'key')) return;
  const labels = { provider: entry.provider, kind: entry.kind, target: entry.name };
  metrics.targetHealthState.set(labels, HEALTH_STATE_VALUE[entry.state.state]);
  metrics.targetHealthScore.set(labels, entry.score);
  if (entry.kind === 'provider') {
    metrics.providerHealth.set({ provider: entry.provider }, HEALTH_STATE_VALUE[entry.state.state]);
    metrics.providerErrorRate.set({ provider: entry.provider }, entry.stats.errorRate);
  }
}

/** What a configured provider or key that has served no call yet shows: healthy since it was seen, no figures. */
function untriedReport(since: number): TargetHealthReport {
  return {
    state: 'healthy',
    since,
    score: 1,
    weight_multiplier: 1,
    requests: 0,
    failures: 0,
    error_rate: 0,
    latency_ms: { p50: null, p95: null, ewma: null },
    utilization: 0,
    momentum: 0,
    transitions: [],
  };
}

/**
 * Every provider with its keys, models and targets, as `GET /api/health/providers` shows them: those that have
 * served calls from their entries, then each configured provider (and key) that has not, as untried and healthy,
 * so a provider added a moment ago is listed before its first call.
 */
export function healthSnapshot(
  entries: ReadonlyMap<string, HealthEntry>,
  configured: Iterable<{ provider: string; keys: ReadonlyArray<{ key: string }> }> = [],
  since = Date.now(),
): ProviderHealthReport[] {
  const providers = new Map<string, ProviderHealthReport>();
  for (const entry of entries.values()) {
    if (entry.kind !== 'provider') continue;
    providers.set(entry.provider, {
      provider: entry.provider,
      ...targetReport(entry),
      keys: [],
      models: [],
      targets: [],
    });
  }
  for (const entry of entries.values()) {
    const provider = providers.get(entry.provider);
    if (!provider) continue;
    if (entry.kind === 'key') provider.keys.push({ id: entry.name, ...targetReport(entry) });
    if (entry.kind === 'model') provider.models.push({ model: entry.name, ...targetReport(entry) });
    if (entry.kind === 'target') {
      provider.targets.push({ key: entry.key ?? null, model: entry.model ?? null, ...targetReport(entry) });
    }
  }
  for (const { provider: name, keys } of configured) {
    let provider = providers.get(name);
    if (!provider) {
      provider = { provider: name, ...untriedReport(since), keys: [], models: [], targets: [] };
      providers.set(name, provider);
    }
    for (const { key } of keys) {
      if (!provider.keys.some((known) => known.id === key))
        provider.keys.push({ id: key, ...untriedReport(since) });
    }
  }
  return [...providers.values()].sort((left, right) => left.provider.localeCompare(right.provider));
}

const round = (value: number | undefined, digits = 4) =>
  value === undefined ? null : Math.round(value * 10 ** digits) / 10 ** digits;

function targetReport(entry: HealthEntry): TargetHealthReport {
  return {
    state: entry.state.state,
    since: entry.state.since,
    score: round(entry.score) ?? 1,
    weight_multiplier: round(entry.multiplier) ?? 1,
    requests: entry.stats.requests,
    failures: entry.stats.failures,
    error_rate: round(entry.stats.errorRate) ?? 0,
    latency_ms: {
      p50: round(entry.stats.p50Ms, 2),
      p95: round(entry.stats.p95Ms, 2),
      ewma: round(entry.stats.ewmaMs, 2),
    },
    utilization: round(entry.parts.utilization) ?? 0,
    momentum: round(entry.parts.momentum) ?? 0,
    transitions: entry.transitions.map((transition) => ({ ...transition })),
  };
}
