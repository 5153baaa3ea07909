import { z } from 'zod';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { Store } from '../store/store.ts';
import { type HealthTarget, healthId, type ParsedId, parseId } from './health-id.ts';
import type { ProviderHealthReport, TargetHealthReport } from './health-report.ts';
import {
  derivedState,
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

interface Transition {
  from: HealthState;
  to: HealthState;
  at: number;
}

interface Entry extends ParsedId {
  id: string;
  /** A target's own buckets on this replica; views have none (they are derived). */
  window: TargetWindow | undefined;
  /** A target's rows of every replica at the last recompute (a view's stats add them up). */
  rows: BucketRow[];
  state: TargetState;
  lastProbe: number;
  /** Attempts in a row that failed on this replica (fast ejection). */
  streak: number;
  /** Successful attempts in a row, begun after the target failed (its probes): they start its recovery. */
  probeSuccesses: number;
  /** When the target last became Failed, and last began recovering (epoch ms; 0: never). */
  failedAt: number;
  recoveredAt: number;
  /** Failed because another replica ejected it (not by what this one measured): ends when that one recovers. */
  adopted: boolean;
  transitions: Transition[];
  stats: WindowStats;
  parts: ScoreParts;
  score: number;
  multiplier: number;
}

/**
 * The document each router replica shares: its window of every target, its load per provider, and the targets
 * it holds Failed by its own measurement (ejected after failures in a row, or by error rate), with when.
 */
const sharedWindowSchema = z.object({
  at: z.number(),
  load: z.record(z.string(), z.tuple([z.number(), z.number()])),
  targets: z.record(z.string(), z.array(z.array(z.number()))),
  failed: z.record(z.string(), z.number()).default({}),
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
 * Health of every target (a provider key serving a model) and of the providers, keys and models derived from
 * them (docs/routing-health.md), and the weights that follow. Requests record their outcome in O(1) on
 * the replica that served them; a target that fails `consecutive_failures` times in a row is Failed at once
 * (fast ejection), and its successful probes start its recovery at once. Every `recompute_interval_ms` each
 * replica shares its window and its Failed targets through the store, merges every replica's, and recomputes
 * states by error rate, scores and weight multipliers, so all replicas reach the same view within one period.
 * Routing reads the last view without waiting for anything; when the store cannot be reached the last view
 * stays in force.
 */
export class HealthBoard {
  private readonly entries = new Map<string, Entry>();
  /** The targets of each provider: its views are derived from them. */
  private readonly targetsOf = new Map<string, Set<Entry>>();
  private readonly load = new Map<string, { inflight: number; capacity: number }>();
  private remoteRows = new Map<string, BucketRow[]>();
  private remoteLoad = new Map<string, [number, number]>();
  private remoteFailed = new Map<string, number>();
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

  /** Closes it as a resource of a composition root (its AsyncDisposableStack). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  get settings(): LoadBalancerConfig {
    return this.config;
  }

  /**
   * Counts one attempt's outcome against its target (provider, key and model). O(1); the only work beyond a
   * counter is a state change: the failure that completes a streak ejects the target, the probe success that
   * completes `recovery_successes` starts its recovery.
   */
  record(target: HealthTarget, outcome: Outcome): void {
    const now = this.now();
    const entry = this.entry(healthId.target(target.provider, target.key, target.model));
    entry.window!.record(now, this.config.bucket_ms, outcome);
    const failed = entry.state.state === 'failed';
    if (outcome.failure) {
      if (outcome.ejects !== false) entry.streak++;
      entry.probeSuccesses = 0;
      if (failed) entry.adopted = false;
      else if (this.config.consecutive_failures > 0 && entry.streak >= this.config.consecutive_failures) {
        this.eject(entry, now);
      }
      return;
    }
    entry.streak = 0;
    // Only an attempt begun after the failure is a probe (one in flight before it says nothing new).
    if (failed && now - (outcome.latencyMs ?? 0) >= entry.failedAt) {
      entry.probeSuccesses++;
      if (entry.probeSuccesses >= this.config.recovery_successes) this.recover(entry, now);
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
   * targets (a model of a provider, or a target). A Failed candidate gets 0, except that one whose probe is
   * due is named as `probe` (half-open: the caller sends it this request) unless `probe: false` (a caller that
   * only plans: the router that executes the plan sends the probes). When every candidate is Failed the
   * configured weights stand: the least bad choice is still a choice.
   */
  weigh(
    candidates: ReadonlyArray<{ ids: readonly string[]; weight: number }>,
    options: { probe?: boolean } = {},
  ): {
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
    const probe = options.probe === false ? undefined : this.dueProbe(candidates);
    if (probe !== undefined || weights.some((weight, index) => weight > 0 && configured[index]! > 0)) {
      return { weights, probe };
    }
    return { weights: configured, probe: undefined };
  }

  /**
   * Targets in the order to try them: a Failed one moves behind the others (traffic rerouted, the fallbacks
   * tried in sequence); one whose probe is due goes first (the probe is this request's first attempt).
   */
  order<T>(targets: readonly T[], idsOf: (target: T) => readonly string[]): T[] {
    if (!this.config.enabled || targets.length < 2 || this.entries.size === 0) return [...targets];
    const failed = (target: T) => idsOf(target).some((id) => this.stateOf(id) === 'failed');
    if (!targets.some(failed)) return [...targets];
    if (targets.every(failed)) return [...targets];
    const probe = this.dueProbe(targets.map((target) => ({ ids: idsOf(target) })));
    const serving = targets.filter((target) => !failed(target));
    const behind = targets.filter((target, index) => failed(target) && index !== probe);
    return probe === undefined ? [...serving, ...behind] : [targets[probe]!, ...serving, ...behind];
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
    for (const entry of this.entries.values())
      if (entry.window) local.set(entry.id, entry.window.since(horizon));
    await this.exchange(local, now);
    for (const id of this.remoteRows.keys()) if (parseId(id)?.kind === 'target') this.entry(id);
    for (const id of this.remoteFailed.keys()) if (parseId(id)?.kind === 'target') this.entry(id);

    for (const entry of this.entries.values()) {
      if (entry.kind !== 'target') continue;
      const rows = [...(local.get(entry.id) ?? []), ...(this.remoteRows.get(entry.id) ?? [])];
      entry.rows = rows;
      const from = Math.max(horizon, entry.state.countFrom);
      const window = summarize(rows, { from, recentFrom: now - windowMs / 3 });
      const failedBucket = entry.state.since - (entry.state.since % bucketMs);
      const after =
        entry.state.state === 'failed'
          ? summarize(rows, { from: failedBucket + bucketMs, recentFrom: now })
          : window;
      entry.stats = window;
      let next = nextState(
        entry.state,
        { window, afterFailure: { requests: after.requests, failures: after.failures } },
        this.config,
        now,
      );
      const failedElsewhere = this.remoteFailed.get(entry.id);
      if (next.state !== 'failed' && failedElsewhere !== undefined && entry.recoveredAt < failedElsewhere) {
        // Another replica ejected it (or judged it Failed) since it last recovered here: out here too.
        next = { ...next, state: 'failed', since: now };
        entry.adopted = true;
      } else if (next.state === 'failed' && entry.adopted && failedElsewhere === undefined) {
        // The replica whose verdict this was saw its probes succeed: it recovers here as well.
        next = { state: 'recovering', since: now, countFrom: now };
      }
      this.setState(entry, next, now, 'error rate');
    }
    this.score(now);
    for (const provider of this.targetsOf.keys()) this.derive(provider, now, { stats: true });
  }

  /** Fast ejection: Failed at once on this replica; the next recompute shares it. */
  private eject(entry: Entry, now: number): void {
    this.setState(
      entry,
      { state: 'failed', since: now, countFrom: entry.state.countFrom },
      now,
      `${entry.streak} failures in a row`,
    );
    this.derive(entry.provider, now);
  }

  /** Its probes succeeded: recovering at once, what it did before not held against it. */
  private recover(entry: Entry, now: number): void {
    this.setState(
      entry,
      { state: 'recovering', since: now, countFrom: now },
      now,
      `${entry.probeSuccesses} probes succeeded`,
    );
    this.derive(entry.provider, now);
  }

  /** A target's new state, with what follows from it: the transition logged and counted, its weight. */
  private setState(entry: Entry, next: TargetState, now: number, reason: string): void {
    const from = entry.state.state;
    if (next.state !== from) {
      this.transition(entry, next.state, now, reason);
      if (next.state === 'failed') {
        entry.failedAt = now;
        entry.lastProbe = now;
        entry.probeSuccesses = 0;
      } else {
        entry.adopted = false;
        if (from === 'failed') {
          entry.recoveredAt = now;
          entry.streak = 0;
        }
      }
    }
    entry.state = next;
    entry.multiplier = weightMultiplier(next, entry.score, { config: this.config, now });
  }

  /**
   * The provider's views from its targets: a provider, a key or a model is Failed only when every target it is
   * made of is (derivedState); its multiplier is its best target's (the keys that serve are chosen among
   * them), its stats (with `stats`, at a recompute) the sum of its targets' rows.
   */
  private derive(provider: string, now: number, options: { stats?: boolean } = {}): void {
    const views = new Map<string, Entry[]>();
    const add = (id: string, target: Entry) => {
      const list = views.get(id);
      if (list) list.push(target);
      else views.set(id, [target]);
    };
    for (const target of this.targetsOf.get(provider) ?? []) {
      add(healthId.provider(provider), target);
      if (target.key !== undefined) add(healthId.key(provider, target.key), target);
      if (target.model !== undefined) add(healthId.model(provider, target.model), target);
    }
    const { window_ms: windowMs } = this.config;
    for (const [id, targets] of views) {
      const view = this.entry(id);
      if (options.stats) {
        const rows = targets.flatMap((target) => target.rows);
        view.stats = summarize(rows, { from: now - windowMs, recentFrom: now - windowMs / 3 });
        view.parts = scoreParts(view.stats, {
          config: this.config,
          relativeLatency: 0,
          utilization: this.utilization(provider),
        });
      }
      const state = derivedState(targets.map((target) => target.state.state));
      if (state !== view.state.state) {
        this.transition(view, state, now, 'its targets');
        if (state === 'failed') view.lastProbe = now;
        view.state = { state, since: now, countFrom: 0 };
      }
      view.score = Math.max(...targets.map((target) => target.score));
      view.multiplier = state === 'failed' ? 0 : Math.max(...targets.map((target) => target.multiplier));
      this.report(view);
    }
  }

  /** Targets' scores after every target's stats are known: latency is judged against the fastest target of the same model. */
  private score(now: number): void {
    const fastest = new Map<string, number>();
    for (const entry of this.entries.values()) {
      const ewma = entry.stats.ewmaMs;
      if (entry.kind !== 'target' || ewma === undefined) continue;
      const best = fastest.get(entry.model ?? '');
      if (best === undefined || ewma < best) fastest.set(entry.model ?? '', ewma);
    }
    for (const entry of this.entries.values()) {
      if (entry.kind !== 'target') continue;
      const best = fastest.get(entry.model ?? '');
      const ewma = entry.stats.ewmaMs;
      const relativeLatency = best && ewma !== undefined ? (ewma - best) / best : 0;
      entry.parts = scoreParts(entry.stats, {
        config: this.config,
        relativeLatency,
        utilization: this.utilization(entry.provider),
      });
      entry.score = scoreOf(entry.parts, this.config);
      entry.multiplier = weightMultiplier(entry.state, entry.score, { config: this.config, now });
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
        const failed: Record<string, number> = {};
        for (const entry of this.entries.values()) {
          if (entry.kind === 'target' && entry.state.state === 'failed' && !entry.adopted) {
            failed[entry.id] = entry.failedAt;
          }
        }
        await store.put(WINDOWS, share.replicaId, { at: now, load, targets, failed });
      }
      const remoteRows = new Map<string, BucketRow[]>();
      const remoteLoad = new Map<string, [number, number]>();
      const remoteFailed = new Map<string, number>();
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
        for (const [target, at] of Object.entries(parsed.data.failed)) {
          remoteFailed.set(target, Math.max(at, remoteFailed.get(target) ?? 0));
        }
      }
      this.remoteRows = remoteRows;
      this.remoteLoad = remoteLoad;
      this.remoteFailed = remoteFailed;
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
      const oldest = this.entries.values().next().value;
      if (oldest !== undefined) {
        this.entries.delete(oldest.id);
        this.targetsOf.get(oldest.provider)?.delete(oldest);
      }
    }
    entry = {
      id,
      ...parsed,
      window: parsed.kind === 'target' ? new TargetWindow() : undefined,
      rows: [],
      state: { state: 'healthy', since: this.now(), countFrom: 0 },
      lastProbe: 0,
      streak: 0,
      probeSuccesses: 0,
      failedAt: 0,
      recoveredAt: 0,
      adopted: false,
      transitions: [],
      stats: EMPTY_STATS,
      parts: NO_PARTS,
      score: 1,
      multiplier: 1,
    };
    this.entries.set(id, entry);
    if (entry.kind === 'target') {
      const targets = this.targetsOf.get(entry.provider);
      if (targets) targets.add(entry);
      else this.targetsOf.set(entry.provider, new Set([entry]));
      // A new target may serve where its siblings are out: the views follow at once (else at the recompute).
      if (this.stateOf(healthId.provider(entry.provider)) !== 'healthy')
        this.derive(entry.provider, this.now());
    }
    return entry;
  }

  private transition(entry: Entry, to: HealthState, at: number, reason: string): void {
    const from = entry.state.state;
    entry.transitions.push({ from, to, at });
    if (entry.transitions.length > TRANSITIONS_KEPT) entry.transitions.shift();
    const { logger, metrics } = this.options;
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

  private report(entry: Entry): void {
    const metrics = this.options.metrics;
    if (!metrics || (entry.kind !== 'provider' && entry.kind !== 'key')) return;
    const labels = { provider: entry.provider, kind: entry.kind, target: entry.name };
    metrics.targetHealthState.set(labels, HEALTH_STATE_VALUE[entry.state.state]);
    metrics.targetHealthScore.set(labels, entry.score);
    if (entry.kind === 'provider') {
      metrics.providerHealth.set({ provider: entry.provider }, HEALTH_STATE_VALUE[entry.state.state]);
      metrics.providerErrorRate.set({ provider: entry.provider }, entry.stats.errorRate);
    }
  }

  /** Every provider with its keys, models and targets, as `GET /api/health/providers` shows them. */
  snapshot(): ProviderHealthReport[] {
    const providers = new Map<string, ProviderHealthReport>();
    for (const entry of this.entries.values()) {
      if (entry.kind !== 'provider') continue;
      providers.set(entry.provider, {
        provider: entry.provider,
        ...targetReport(entry),
        keys: [],
        models: [],
        targets: [],
      });
    }
    for (const entry of this.entries.values()) {
      const provider = providers.get(entry.provider);
      if (!provider) continue;
      if (entry.kind === 'key') provider.keys.push({ id: entry.name, ...targetReport(entry) });
      if (entry.kind === 'model') provider.models.push({ model: entry.name, ...targetReport(entry) });
      if (entry.kind === 'target') {
        provider.targets.push({ key: entry.key ?? null, model: entry.model ?? null, ...targetReport(entry) });
      }
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
