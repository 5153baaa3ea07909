import type { Live } from '../config/live.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { Store } from '../store/store.ts';
import { HealthEntries, type HealthEntry } from './health-entries.ts';
import { type HealthTarget, healthId } from './health-id.ts';
import { localWindows, recomputeHealth } from './health-recompute.ts';
import type { ProviderHealthReport } from './health-report.ts';
import { healthSnapshot } from './health-reporting.ts';
import { NO_REMOTE_WINDOWS, SharedWindows } from './health-sharing.ts';
import { type KeyLimits, type ProviderKeyLimits, signalsOf, type TargetSignals } from './health-signals.ts';
import type { HealthState } from './health-state.ts';
import type { Outcome, Samples } from './health-window.ts';
import {
  DEFAULT_LOAD_BALANCER_CONFIG,
  type LoadBalancerConfig,
  readLoadBalancerConfig,
} from './load-balancer-config.ts';

export interface HealthBoardOptions {
  /**
   * The config file's `load_balancer` (live where the file is watched); a document written through the admin
   * API replaces it. Read at each recompute.
   */
  config?: Live<LoadBalancerConfig> | undefined;
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
 * replica shares its window, its Failed targets, its requests in flight and its keys' limits through the store,
 * merges every replica's, and recomputes states by error rate, scores, weight multipliers and the signals routing
 * strategies read (`signals`), so all replicas reach the same view within one period.
 * Routing reads the last view without waiting for anything; when the store cannot be reached the last view
 * stays in force.
 */
export class HealthBoard {
  /** Every target and view, and how their states change. */
  private readonly tracked: HealthEntries;
  /** `tracked`'s entries by id, held here because every request reads them. */
  private readonly entries: ReadonlyMap<string, HealthEntry>;
  private readonly load = new Map<string, { inflight: number; capacity: number }>();
  /** Where this replica reads the limits of the keys it serves (a router), at each recompute. */
  private limitSource: (() => Iterable<ProviderKeyLimits>) | undefined;
  /** Key limits by provider as of the last recompute: this replica's, else another's. */
  private limits: ReadonlyMap<string, readonly KeyLimits[]> = new Map();
  /** Cluster mode: the replicas' windows in the store. */
  private readonly sharing: SharedWindows | undefined;
  private config: LoadBalancerConfig;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  private readonly options: HealthBoardOptions;

  /** When the board began: an untried provider has been healthy since then. */
  private readonly createdAt: number;

  constructor(options: HealthBoardOptions = {}) {
    this.options = options;
    this.config = this.seed();
    this.now = options.now ?? Date.now;
    this.createdAt = this.now();
    this.tracked = new HealthEntries({
      now: this.now,
      settings: () => this.config,
      logger: options.logger,
      metrics: options.metrics,
    });
    this.entries = this.tracked.byId;
    const { store, share, logger } = options;
    this.sharing = store && share ? new SharedWindows({ store, share, logger }) : undefined;
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
   * completes `recovery_successes` starts its recovery. An attempt that was in flight when the target was last
   * judged Failed is a straggler of that episode: it counts as flow, not toward the window, the streak or the
   * probes, so failures that come in late (slow timeouts, other replicas' calls) do not send a target that has
   * recovered since back to Failed (recovering → failed → recovering within a second).
   */
  record(target: HealthTarget, outcome: Outcome): void {
    const now = this.now();
    const entry = this.tracked.entry(healthId.target(target.provider, target.key, target.model));
    entry.flow.recordedRequests++;
    if (!outcome.failure) entry.flow.recordedTokens += outcome.tokens ?? 0;
    if (now - (outcome.latencyMs ?? outcome.ttftMs ?? 0) < entry.failedAt) return;
    entry.window!.record(now, this.config.bucket_ms, outcome);
    const failed = entry.state.state === 'failed';
    if (outcome.failure) {
      if (outcome.ejects !== false) entry.streak++;
      entry.probeSuccesses = 0;
      if (failed) entry.adopted = false;
      else if (this.config.consecutive_failures > 0 && entry.streak >= this.config.consecutive_failures) {
        this.tracked.eject(entry, now);
      }
      return;
    }
    entry.streak = 0;
    if (failed) {
      entry.probeSuccesses++;
      if (entry.probeSuccesses >= this.config.recovery_successes) this.tracked.recover(entry, now);
    }
  }

  /**
   * Samples of an answer already counted by `record`: a stream is counted at its first content chunk (with its
   * time to first token) and measures its latency and tokens when it ends. O(1).
   */
  measure(target: HealthTarget, samples: Samples): void {
    const entry = this.tracked.entry(healthId.target(target.provider, target.key, target.model));
    entry.window!.measure(this.now(), this.config.bucket_ms, samples);
    entry.flow.recordedTokens += samples.tokens ?? 0;
  }

  /**
   * A request to a target begins on this replica: it is in flight (here at once, on every replica and in
   * governance from the next recompute) until the returned function is called (a second call does nothing).
   */
  begin(target: HealthTarget): () => void {
    const flow = this.tracked.entry(healthId.target(target.provider, target.key, target.model)).flow;
    flow.inflight++;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      flow.inflight--;
    };
  }

  /**
   * Where this replica reads the rpm/tpm limits of the keys it serves: read at each recompute and shared with
   * its window, so every replica and governance know them (headroom).
   */
  publishLimits(source: () => Iterable<ProviderKeyLimits>): void {
    this.limitSource = source;
  }

  /**
   * What routing strategies read of a target (`healthId.target`) or a provider's model (`healthId.model`):
   * what the last recompute summed over every replica, and this replica's requests in flight and served since.
   * Cheap enough for every candidate of every request: no store, a few additions.
   */
  signals(id: string): TargetSignals {
    return signalsOf(id, this.entries.get(id), this.limits);
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
        .filter((entry): entry is HealthEntry => entry?.state.state === 'failed');
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
    const { rows, flows } = localWindows(this.entries, { now, windowMs: this.config.window_ms });
    const limits = this.localLimits();
    const local = { now, config: this.config, rows, flows, limits, load: this.load, entries: this.entries };
    await this.sharing?.exchange(local);
    const remote = this.sharing?.remote ?? NO_REMOTE_WINDOWS;
    recomputeHealth(this.tracked, local, remote);
    this.limits = new Map([...remote.limits, ...limits]);
  }

  /** The limits of the keys this replica serves, by provider (a key with neither limit is left out). */
  private localLimits(): Map<string, readonly KeyLimits[]> {
    const limits = new Map<string, readonly KeyLimits[]>();
    for (const { provider, keys } of this.limitSource?.() ?? []) {
      const limited = keys.filter((key) => key.rpm !== undefined || key.tpm !== undefined);
      if (limited.length > 0) limits.set(provider, limited);
    }
    return limits;
  }

  /** The config file's settings in force (the defaults without any). */
  private seed(): LoadBalancerConfig {
    return this.options.config?.current() ?? DEFAULT_LOAD_BALANCER_CONFIG;
  }

  private async refreshConfig(): Promise<void> {
    const { store } = this.options;
    if (!store) {
      this.config = this.seed();
      return;
    }
    try {
      this.config = await readLoadBalancerConfig(store, this.seed());
    } catch {
      // The store is down: the config in force stays.
    }
  }

  /**
   * Every provider with its keys, models and targets, as `GET /api/health/providers` shows them; the providers
   * this replica serves that have had no call yet are listed untried.
   */
  snapshot(): ProviderHealthReport[] {
    return healthSnapshot(this.entries, this.limitSource?.() ?? [], this.createdAt);
  }
}
