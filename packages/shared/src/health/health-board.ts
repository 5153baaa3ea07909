import { z } from 'zod';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { Store } from '../store/store.ts';
import type { ProviderHealthReport, TargetHealthReport } from './health-report.ts';
import {
  HEALTH_STATE_VALUE,
  type HealthState,
  nextState,
  type ScoreParts,
  scoreOf,
  scoreParts,
  type TargetState,
  weightMultiplier,
} from './health-state.ts';
import { type BucketRow, type Outcome, summarize, TargetWindow, type WindowStats } from './health-window.ts';
import {
  DEFAULT_LOAD_BALANCER_CONFIG,
  type LoadBalancerConfig,
  readLoadBalancerConfig,
} from './load-balancer-config.ts';

/** What is measured: a provider, one of its keys, or one of its models. */
export interface HealthTarget {
  provider: string;
  key?: string | undefined;
  model?: string | undefined;
}

type TargetKind = 'provider' | 'key' | 'model';

/** `p:openai`, `k:openai#key-1`, `m:openai/gpt-4o` (provider names hold neither `#` nor `/`). */
export const healthId = {
  provider: (provider: string) => `p:${provider}`,
  key: (provider: string, key: string) => `k:${provider}#${key}`,
  model: (provider: string, model: string) => `m:${provider}/${model}`,
};

function parseId(id: string): { kind: TargetKind; provider: string; name: string } | undefined {
  const kind = ({ p: 'provider', k: 'key', m: 'model' } as const)[id[0] as 'p' | 'k' | 'm'];
  if (!kind || id[1] !== ':') return undefined;
  const rest = id.slice(2);
  if (kind === 'provider') return { kind, provider: rest, name: rest };
  const at = rest.indexOf(kind === 'key' ? '#' : '/');
  return at > 0 ? { kind, provider: rest.slice(0, at), name: rest.slice(at + 1) } : undefined;
}

interface Transition {
  from: HealthState;
  to: HealthState;
  at: number;
}

interface Entry {
  id: string;
  kind: TargetKind;
  provider: string;
  name: string;
  window: TargetWindow;
  state: TargetState;
  lastProbe: number;
  transitions: Transition[];
  stats: WindowStats;
  parts: ScoreParts;
  score: number;
  multiplier: number;
}

/** The document each router replica shares: its window of every target, and its load per provider. */
const sharedWindowSchema = z.object({
  at: z.number(),
  load: z.record(z.string(), z.tuple([z.number(), z.number()])),
  targets: z.record(z.string(), z.array(z.array(z.number()))),
});

const WINDOWS = 'health-windows';
/** Targets one replica tracks at most (model names come from callers): the oldest is forgotten past it. */
const MAX_TARGETS = 2_000;
const TRANSITIONS_KEPT = 10;
const EMPTY_STATS: WindowStats = summarize([], { from: 0, recentFrom: 0 });
const NO_PARTS: ScoreParts = { errorRate: 0, latency: 0, utilization: 0, momentum: 0 };

export interface HealthBoardOptions {
  /** The config file's `load_balancer`; a document written through the admin API replaces it. */
  config?: LoadBalancerConfig | undefined;
  /** Where the admin API's config document is read from, and (with `share`) the replicas' windows. */
  store?: Store | undefined;
  /**
   * Cluster mode: every replica shares its window through the store, and reads the others'. `publish: false`
   * for a reader that routes by health but serves no upstream itself (governance).
   */
  share?: { replicaId: string; publish: boolean } | undefined;
  logger?: Logger | undefined;
  metrics?: Metrics | undefined;
  now?: () => number;
}

/**
 * Health of every provider, key and model target (SPEC.md "Provider/key health"), and the weights that follow
 * from it. Requests record their outcome in O(1) on the replica that served them; every
 * `recompute_interval_ms` each replica shares its window through the store, merges every replica's, and
 * recomputes states, scores and weight multipliers, so all replicas reach the same view within one period.
 * Routing reads the last view without waiting for anything; when the store cannot be reached the last view
 * stays in force.
 */
export class HealthBoard {
  private readonly entries = new Map<string, Entry>();
  private readonly load = new Map<string, { inflight: number; capacity: number }>();
  private remoteRows = new Map<string, BucketRow[]>();
  private remoteLoad = new Map<string, [number, number]>();
  private readonly seed: LoadBalancerConfig;
  private config: LoadBalancerConfig;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  private readonly options: HealthBoardOptions;

  constructor(options: HealthBoardOptions = {}) {
    this.options = options;
    this.seed = options.config ?? DEFAULT_LOAD_BALANCER_CONFIG;
    this.config = this.seed;
    this.now = options.now ?? Date.now;
  }

  /** Reads the config document and recomputes every `recompute_interval_ms` from now on. */
  async start(): Promise<this> {
    await this.recompute();
    this.schedule();
    return this;
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  get settings(): LoadBalancerConfig {
    return this.config;
  }

  /** Counts one attempt's outcome against its provider, key and model. */
  record(target: HealthTarget, outcome: Outcome): void {
    const now = this.now();
    const bucketMs = this.config.bucket_ms;
    this.entry(healthId.provider(target.provider)).window.record(now, bucketMs, outcome);
    if (target.key)
      this.entry(healthId.key(target.provider, target.key)).window.record(now, bucketMs, outcome);
    if (target.model) {
      this.entry(healthId.model(target.provider, target.model)).window.record(now, bucketMs, outcome);
    }
  }

  /** Requests a provider serves right now on this replica, against its configured concurrency (utilization). */
  setLoad(provider: string, inflight: number, capacity: number): void {
    this.load.set(provider, { inflight, capacity });
  }

  stateOf(id: string): HealthState {
    return this.entries.get(id)?.state.state ?? 'healthy';
  }

  /**
   * Weights of candidates after health: each candidate's configured weight times the multipliers of its
   * targets (a provider and its model, or a key). A Failed candidate gets 0, except that one whose probe is
   * due is named as `probe` (half-open: the caller sends it this request). When every candidate is Failed
   * the configured weights stand: the least bad choice is still a choice.
   */
  weigh(candidates: ReadonlyArray<{ ids: readonly string[]; weight: number }>): {
    weights: number[];
    probe: number | undefined;
  } {
    const configured = candidates.map((candidate) => candidate.weight);
    if (!this.config.enabled || this.entries.size === 0) return { weights: configured, probe: undefined };
    const weights = candidates.map((candidate) => {
      let weight = candidate.weight;
      for (const id of candidate.ids) weight *= this.entries.get(id)?.multiplier ?? 1;
      return weight;
    });
    const probe = this.dueProbe(candidates);
    if (probe !== undefined || weights.some((weight, index) => weight > 0 && configured[index]! > 0)) {
      return { weights, probe };
    }
    return { weights: configured, probe: undefined };
  }

  /**
   * Targets in the order to try them: a Failed one moves behind the others (traffic rerouted, the fallbacks
   * tried in sequence) unless its probe is due; the order is kept otherwise.
   */
  order<T>(targets: readonly T[], idsOf: (target: T) => readonly string[]): T[] {
    if (!this.config.enabled || targets.length < 2 || this.entries.size === 0) return [...targets];
    const failed = (target: T) => idsOf(target).some((id) => this.stateOf(id) === 'failed');
    if (!targets.some(failed)) return [...targets];
    const probe = this.dueProbe(targets.map((target) => ({ ids: idsOf(target) })));
    const isServing = (target: T, index: number) => index === probe || !failed(target);
    const serving = targets.filter(isServing);
    if (serving.length === 0) return [...targets];
    return [...serving, ...targets.filter((target, index) => !isServing(target, index))];
  }

  /** The first Failed candidate whose probe is due (for every Failed target it is judged by); marks it probed. */
  private dueProbe(candidates: ReadonlyArray<{ ids: readonly string[] }>): number | undefined {
    const now = this.now();
    for (const [index, candidate] of candidates.entries()) {
      const failed = candidate.ids
        .map((id) => this.entries.get(id))
        .filter((entry): entry is Entry => entry?.state.state === 'failed');
      if (failed.length === 0) continue;
      if (failed.some((entry) => now - entry.lastProbe < this.config.probe_interval_ms)) continue;
      for (const entry of failed) entry.lastProbe = now;
      return index;
    }
    return undefined;
  }

  /** Shares this replica's window, merges every replica's, and recomputes states and weights. */
  recompute(): Promise<void> {
    this.running ??= this.recomputeNow().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.recompute()
        .catch((error) => this.options.logger?.warn({ err: error }, 'health recompute failed'))
        .finally(() => {
          if (this.timer) this.schedule();
        });
    }, this.config.recompute_interval_ms);
    this.timer.unref();
  }

  private async recomputeNow(): Promise<void> {
    await this.refreshConfig();
    const now = this.now();
    const { window_ms: windowMs, bucket_ms: bucketMs } = this.config;
    const horizon = now - windowMs;
    const local = new Map<string, BucketRow[]>();
    for (const entry of this.entries.values()) local.set(entry.id, entry.window.since(horizon));
    await this.exchange(local, now);
    for (const id of this.remoteRows.keys()) if (parseId(id)) this.entry(id);

    for (const entry of this.entries.values()) {
      const rows = [...(local.get(entry.id) ?? []), ...(this.remoteRows.get(entry.id) ?? [])];
      const from = Math.max(horizon, entry.state.countFrom);
      const window = summarize(rows, { from, recentFrom: now - windowMs / 3 });
      const failedBucket = entry.state.since - (entry.state.since % bucketMs);
      const after =
        entry.state.state === 'failed'
          ? summarize(rows, { from: failedBucket + bucketMs, recentFrom: now })
          : window;
      const next = nextState(
        entry.state,
        { window, afterFailure: { requests: after.requests, failures: after.failures } },
        this.config,
        now,
      );
      entry.stats = window;
      if (next.state !== entry.state.state) this.transition(entry, next.state, now);
      entry.state = next;
    }
    this.score(now);
  }

  /** Scores after every target's stats are known: latency is judged against the fastest sibling. */
  private score(now: number): void {
    const fastest = new Map<string, number>();
    const group = (entry: Entry) =>
      entry.kind === 'provider' ? 'provider' : `${entry.kind}:${entry.provider}`;
    for (const entry of this.entries.values()) {
      const ewma = entry.stats.ewmaMs;
      if (ewma === undefined) continue;
      const best = fastest.get(group(entry));
      if (best === undefined || ewma < best) fastest.set(group(entry), ewma);
    }
    for (const entry of this.entries.values()) {
      const best = fastest.get(group(entry));
      const ewma = entry.stats.ewmaMs;
      const relativeLatency = best && ewma !== undefined ? (ewma - best) / best : 0;
      entry.parts = scoreParts(entry.stats, {
        config: this.config,
        relativeLatency,
        utilization: this.utilization(entry.provider),
      });
      entry.score = scoreOf(entry.parts, this.config);
      entry.multiplier = weightMultiplier(entry.state, entry.score, { config: this.config, now });
      this.report(entry);
    }
  }

  private utilization(provider: string): number {
    const local = this.load.get(provider);
    const remote = this.remoteLoad.get(provider);
    const inflight = (local?.inflight ?? 0) + (remote?.[0] ?? 0);
    const capacity = (local?.capacity ?? 0) + (remote?.[1] ?? 0);
    return capacity > 0 ? inflight / capacity : 0;
  }

  /** Cluster mode: writes this replica's window, reads the others'; a store that fails keeps the last view. */
  private async exchange(local: Map<string, BucketRow[]>, now: number): Promise<void> {
    const { store, share } = this.options;
    if (!store || !share) return;
    const windowMs = this.config.window_ms;
    try {
      if (share.publish) {
        const targets: Record<string, BucketRow[]> = {};
        for (const [id, rows] of local) if (rows.length > 0) targets[id] = rows;
        const load: Record<string, [number, number]> = {};
        for (const [provider, { inflight, capacity }] of this.load) load[provider] = [inflight, capacity];
        await store.put(WINDOWS, share.replicaId, { at: now, load, targets });
      }
      const remoteRows = new Map<string, BucketRow[]>();
      const remoteLoad = new Map<string, [number, number]>();
      for (const { id, value } of await store.list(WINDOWS)) {
        if (id === share.replicaId) continue;
        const parsed = sharedWindowSchema.safeParse(value);
        if (!parsed.success || parsed.data.at < now - windowMs * 10) {
          // A replica gone for long (or a document no replica can read): nobody else will remove it.
          await store.delete(WINDOWS, id);
          continue;
        }
        if (parsed.data.at < now - 2 * this.config.recompute_interval_ms - windowMs) continue;
        for (const [target, rows] of Object.entries(parsed.data.targets)) {
          const merged = remoteRows.get(target) ?? [];
          merged.push(...rows);
          remoteRows.set(target, merged);
        }
        for (const [provider, [inflight, capacity]] of Object.entries(parsed.data.load)) {
          const sum = remoteLoad.get(provider) ?? [0, 0];
          remoteLoad.set(provider, [sum[0] + inflight, sum[1] + capacity]);
        }
      }
      this.remoteRows = remoteRows;
      this.remoteLoad = remoteLoad;
    } catch (error) {
      this.options.logger?.warn(
        { err: error },
        'health: the store cannot be reached; routing on the last view',
      );
    }
  }

  private async refreshConfig(): Promise<void> {
    const { store } = this.options;
    if (!store) return;
    try {
      this.config = await readLoadBalancerConfig(store, this.seed);
    } catch {
      // The store is down: the config in force stays.
    }
  }

  private entry(id: string): Entry {
    let entry = this.entries.get(id);
    if (entry) return entry;
    const parsed = parseId(id)!;
    if (this.entries.size >= MAX_TARGETS) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    entry = {
      id,
      ...parsed,
      window: new TargetWindow(),
      state: { state: 'healthy', since: this.now(), countFrom: 0 },
      lastProbe: 0,
      transitions: [],
      stats: EMPTY_STATS,
      parts: NO_PARTS,
      score: 1,
      multiplier: 1,
    };
    this.entries.set(id, entry);
    return entry;
  }

  private transition(entry: Entry, to: HealthState, at: number): void {
    const from = entry.state.state;
    entry.transitions.push({ from, to, at });
    if (entry.transitions.length > TRANSITIONS_KEPT) entry.transitions.shift();
    const { logger, metrics } = this.options;
    logger?.info(
      { target: entry.kind === 'key' ? `${entry.provider} key ${entry.name}` : entry.id.slice(2), from, to },
      `health: ${entry.kind} ${entry.id.slice(2)} ${from} → ${to} (error rate ${(entry.stats.errorRate * 100).toFixed(1)} % over ${entry.stats.requests} requests)`,
    );
    // Model names come from callers: metrics carry providers and configured keys only (bounded labels).
    if (entry.kind !== 'model')
      metrics?.healthTransitions.inc({ provider: entry.provider, kind: entry.kind, from, to });
  }

  private report(entry: Entry): void {
    const metrics = this.options.metrics;
    if (!metrics || entry.kind === 'model') return;
    const labels = { provider: entry.provider, kind: entry.kind, target: entry.name };
    metrics.targetHealthState.set(labels, HEALTH_STATE_VALUE[entry.state.state]);
    metrics.targetHealthScore.set(labels, entry.score);
    if (entry.kind === 'provider') {
      metrics.providerHealth.set({ provider: entry.provider }, HEALTH_STATE_VALUE[entry.state.state]);
      metrics.providerErrorRate.set({ provider: entry.provider }, entry.stats.errorRate);
    }
  }

  /** Every provider with its keys and models, as `GET /api/health/providers` shows them. */
  snapshot(): ProviderHealthReport[] {
    const providers = new Map<string, ProviderHealthReport>();
    for (const entry of this.entries.values()) {
      if (entry.kind !== 'provider') continue;
      providers.set(entry.provider, {
        provider: entry.provider,
        ...targetReport(entry),
        keys: [],
        models: [],
      });
    }
    for (const entry of this.entries.values()) {
      const provider = providers.get(entry.provider);
      if (!provider) continue;
      if (entry.kind === 'key') provider.keys.push({ id: entry.name, ...targetReport(entry) });
      if (entry.kind === 'model') provider.models.push({ model: entry.name, ...targetReport(entry) });
    }
    return [...providers.values()].sort((left, right) => left.provider.localeCompare(right.provider));
  }
}

const round = (value: number | undefined, digits = 4) =>
  value === undefined ? null : Math.round(value * 10 ** digits) / 10 ** digits;

function targetReport(entry: Entry): TargetHealthReport {
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
