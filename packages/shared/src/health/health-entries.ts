import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { healthId, type ParsedId, parseId } from './health-id.ts';
import { announceTransition, reportGauges } from './health-reporting.ts';
import {
  derivedState,
  type HealthState,
  type ScoreParts,
  type TargetState,
  weightMultiplier,
} from './health-state.ts';
import { type BucketRow, summarize, TargetWindow, type WindowStats } from './health-window.ts';
import type { LoadBalancerConfig } from './load-balancer-config.ts';

interface Transition {
  from: HealthState;
  to: HealthState;
  at: number;
}

/**
 * A target's requests in flight and its use of the last minute. `minute…` is every replica's at the last
 * recompute; what this replica recorded since is `recorded…` − `counted…` (monotonic counters, so nothing
 * recorded while a recompute waits for the store is lost or counted twice).
 */
export interface TargetFlow {
  inflight: number;
  othersInflight: number;
  minuteRequests: number;
  minuteTokens: number;
  recordedRequests: number;
  recordedTokens: number;
  countedRequests: number;
  countedTokens: number;
}

function newFlow(): TargetFlow {
  return {
    inflight: 0,
    othersInflight: 0,
    minuteRequests: 0,
    minuteTokens: 0,
    recordedRequests: 0,
    recordedTokens: 0,
    countedRequests: 0,
    countedTokens: 0,
  };
}

/** A target (what is measured) or a view derived from targets (a provider, a key, a provider's model). */
export interface HealthEntry extends ParsedId {
  id: string;
  /** A target's own buckets on this replica; views have none (they are derived). */
  window: TargetWindow | undefined;
  /** A target's rows of every replica at the last recompute (a view's stats add them up). */
  rows: BucketRow[];
  /** A target's requests in flight and use of the last minute (a view's signals add them up). */
  flow: TargetFlow;
  /** A view's targets as last derived (a target's: none). */
  members: readonly HealthEntry[];
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

/** Targets one replica tracks at most (model names come from callers): the oldest is forgotten past it. */
const MAX_TARGETS = 2_000;
const TRANSITIONS_KEPT = 10;
const EMPTY_STATS: WindowStats = summarize([], { from: 0, recentFrom: 0 });
const NO_PARTS: ScoreParts = { errorRate: 0, latency: 0, utilization: 0, momentum: 0 };

export interface HealthEntriesOptions {
  now: () => number;
  /** The config in force (a recompute may replace it). */
  settings: () => LoadBalancerConfig;
  logger?: Logger | undefined;
  metrics?: Metrics | undefined;
}

/**
 * Every target and view a board knows, and how their states change: a target's own transitions (fast ejection,
 * recovery by probes, a recompute's verdict) and its provider's views derived from them at once.
 */
export class HealthEntries {
  /** By id; the board reads it on every request. */
  readonly byId = new Map<string, HealthEntry>();
  /** The targets of each provider: its views are derived from them. */
  readonly targetsOf = new Map<string, Set<HealthEntry>>();
  private readonly options: HealthEntriesOptions;

  constructor(options: HealthEntriesOptions) {
    this.options = options;
  }

  /** The entry of an id, made healthy on first sight (the oldest is forgotten past MAX_TARGETS). */
  entry(id: string): HealthEntry {
    let entry = this.byId.get(id);
    if (entry) return entry;
    const parsed = parseId(id)!;
    if (this.byId.size >= MAX_TARGETS) {
      const oldest = this.byId.values().next().value;
      if (oldest !== undefined) {
        this.byId.delete(oldest.id);
        this.targetsOf.get(oldest.provider)?.delete(oldest);
      }
    }
    entry = {
      id,
      ...parsed,
      window: parsed.kind === 'target' ? new TargetWindow() : undefined,
      rows: [],
      flow: newFlow(),
      members: [],
      state: { state: 'healthy', since: this.options.now(), countFrom: 0 },
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
    this.byId.set(id, entry);
    if (entry.kind === 'target') {
      const targets = this.targetsOf.get(entry.provider);
      if (targets) targets.add(entry);
      else this.targetsOf.set(entry.provider, new Set([entry]));
      // A new target may serve where its siblings are out: the views follow at once (else at the recompute).
      const view = this.byId.get(healthId.provider(entry.provider));
      if (view !== undefined && view.state.state !== 'healthy')
        this.derive(entry.provider, this.options.now());
    }
    return entry;
  }

  /** Fast ejection: Failed at once on this replica; the next recompute shares it. */
  eject(entry: HealthEntry, now: number): void {
    this.setState(
      entry,
      { state: 'failed', since: now, countFrom: entry.state.countFrom },
      now,
      `${entry.streak} failures in a row`,
    );
    this.derive(entry.provider, now);
  }

  /** Its probes succeeded: recovering at once, what it did before not held against it. */
  recover(entry: HealthEntry, now: number): void {
    this.setState(
      entry,
      { state: 'recovering', since: now, countFrom: now },
      now,
      `${entry.probeSuccesses} probes succeeded`,
    );
    this.derive(entry.provider, now);
  }

  /** A target's new state, with what follows from it: the transition logged and counted, its weight. */
  setState(entry: HealthEntry, next: TargetState, now: number, reason: string): void {
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
    entry.multiplier = weightMultiplier(next, entry.score, { config: this.options.settings(), now });
  }

  /**
   * The provider's views from its targets: a provider, a key or a model is Failed only when every target it is
   * made of is (derivedState); its multiplier is its best target's (the keys that serve are chosen among
   * them). `measure` (a recompute) sets each view's stats from its targets before its state is reported.
   */
  derive(
    provider: string,
    now: number,
    measure?: (view: HealthEntry, targets: readonly HealthEntry[]) => void,
  ): void {
    const views = new Map<string, HealthEntry[]>();
    const add = (id: string, target: HealthEntry) => {
      const list = views.get(id);
      if (list) list.push(target);
      else views.set(id, [target]);
    };
    for (const target of this.targetsOf.get(provider) ?? []) {
      add(healthId.provider(provider), target);
      if (target.key !== undefined) add(healthId.key(provider, target.key), target);
      if (target.model !== undefined) add(healthId.model(provider, target.model), target);
    }
    for (const [id, targets] of views) {
      const view = this.entry(id);
      view.members = targets;
      measure?.(view, targets);
      const state = derivedState(targets.map((target) => target.state.state));
      if (state !== view.state.state) {
        this.transition(view, state, now, 'its targets');
        if (state === 'failed') view.lastProbe = now;
        view.state = { state, since: now, countFrom: 0 };
      }
      view.score = Math.max(...targets.map((target) => target.score));
      view.multiplier = state === 'failed' ? 0 : Math.max(...targets.map((target) => target.multiplier));
      reportGauges(view, this.options.metrics);
    }
  }

  private transition(entry: HealthEntry, to: HealthState, at: number, reason: string): void {
    entry.transitions.push({ from: entry.state.state, to, at });
    if (entry.transitions.length > TRANSITIONS_KEPT) entry.transitions.shift();
    announceTransition(entry, { to, reason }, this.options);
  }
}
