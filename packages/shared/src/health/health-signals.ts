import type { HealthEntry, TargetFlow } from './health-entries.ts';
import { parseId } from './health-id.ts';
import type { HealthState } from './health-state.ts';

/**
 * What routing strategies read of a target or a provider's model (docs/routing-health.md "Signals"): the
 * same on every router replica and in governance within one recompute, this replica's own requests in flight
 * and served since counted at once.
 */
export interface TargetSignals {
  /** As `stateOf`. */
  state: HealthState;
  /** Latency of successes (to the end of the answer), p95 over the window, every replica. */
  latencyP95Ms: number | undefined;
  /** Time to first token, p95 over the window, every replica. */
  ttftP95Ms: number | undefined;
  /** Requests in flight: the other replicas' as they last published, and this one's now. */
  inflight: number;
  /** Over the last 60 s, every replica. */
  requestsPerMinute: number;
  tokensPerMinute: number;
  /** 0..1: room left under the keys' `rpm_limit`/`tpm_limit` this minute; undefined: no limit known. */
  headroom: number | undefined;
}

/** A provider key's limits, as the router that serves it shares them (a key without either is not listed). */
export interface KeyLimits {
  key: string;
  rpm?: number | undefined;
  tpm?: number | undefined;
  /** The models it may serve; empty: every model. */
  models: readonly string[];
}

/** The limits of a provider's keys: what a router replica publishes at each recompute. */
export interface ProviderKeyLimits {
  provider: string;
  keys: readonly KeyLimits[];
}

const requestsOf = (flow: TargetFlow) => flow.minuteRequests + flow.recordedRequests - flow.countedRequests;
const tokensOf = (flow: TargetFlow) => flow.minuteTokens + flow.recordedTokens - flow.countedTokens;

/** The signals of an id: a target's own, a view's added up over its targets. O(targets of the view). */
export function signalsOf(
  id: string,
  entry: HealthEntry | undefined,
  limits: ReadonlyMap<string, readonly KeyLimits[]>,
): TargetSignals {
  if (!entry) return idleSignals(id, limits);
  let inflight = 0;
  let requests = 0;
  let tokens = 0;
  const add = (target: HealthEntry) => {
    inflight += target.flow.inflight + target.flow.othersInflight;
    requests += requestsOf(target.flow);
    tokens += tokensOf(target.flow);
  };
  if (entry.kind === 'target') add(entry);
  else for (const target of entry.members) add(target);
  return {
    state: entry.state.state,
    latencyP95Ms: entry.stats.p95Ms,
    ttftP95Ms: entry.stats.ttftP95Ms,
    inflight,
    requestsPerMinute: requests,
    tokensPerMinute: tokens,
    headroom: headroomOf(entry, limits.get(entry.provider)),
  };
}

/** Nothing measured yet: healthy and idle, with all the room its keys' limits give. */
function idleSignals(id: string, limits: ReadonlyMap<string, readonly KeyLimits[]>): TargetSignals {
  const parsed = parseId(id);
  const keys = parsed ? limits.get(parsed.provider) : undefined;
  const limited =
    parsed?.kind === 'target'
      ? keys?.some((key) => key.key === parsed.key)
      : parsed?.kind === 'model'
        ? keys?.some((key) => serves(key, parsed.name))
        : keys !== undefined && keys.length > 0;
  return {
    state: 'healthy',
    latencyP95Ms: undefined,
    ttftP95Ms: undefined,
    inflight: 0,
    requestsPerMinute: 0,
    tokensPerMinute: 0,
    headroom: limited ? 1 : undefined,
  };
}

const serves = (key: KeyLimits, model: string) => key.models.length === 0 || key.models.includes(model);

/**
 * Room left this minute, per dimension (Σ limits − Σ use) / Σ limits over the keys with a limit in it, the
 * smaller of requests and tokens. A target is judged by its key's limits (providers limit a key per model); a
 * provider's model by every key that may serve it, served yet or not; a key or a provider by its targets.
 */
function headroomOf(entry: HealthEntry, keys: readonly KeyLimits[] | undefined): number | undefined {
  if (!keys || keys.length === 0) return undefined;
  const room = new Room();
  if (entry.kind === 'target') {
    const key = keys.find((candidate) => candidate.key === entry.key);
    if (key) room.add(key, entry.flow);
  } else if (entry.kind === 'model') {
    for (const key of keys) {
      if (!serves(key, entry.name)) continue;
      room.add(key, entry.members.find((target) => target.key === key.key)?.flow);
    }
  } else {
    for (const target of entry.members) {
      const key = keys.find((candidate) => candidate.key === target.key);
      if (key) room.add(key, target.flow);
    }
  }
  return room.share();
}

/** Limits and use added up per dimension. */
class Room {
  private rpm = 0;
  private requests = 0;
  private tpm = 0;
  private tokens = 0;

  add(key: KeyLimits, flow: TargetFlow | undefined): void {
    if (key.rpm !== undefined) {
      this.rpm += key.rpm;
      this.requests += flow ? requestsOf(flow) : 0;
    }
    if (key.tpm !== undefined) {
      this.tpm += key.tpm;
      this.tokens += flow ? tokensOf(flow) : 0;
    }
  }

  share(): number | undefined {
    const byRequests = this.rpm > 0 ? clamp01((this.rpm - this.requests) / this.rpm) : undefined;
    const byTokens = this.tpm > 0 ? clamp01((this.tpm - this.tokens) / this.tpm) : undefined;
    if (byRequests === undefined) return byTokens;
    return byTokens === undefined ? byRequests : Math.min(byRequests, byTokens);
  }
}

function clamp01(value: number): number {
  return Math.min(1, Math.max(0, value));
}
