import type { HealthEntries, HealthEntry } from './health-entries.ts';
import { parseId } from './health-id.ts';
import type { LocalFlow, LocalWindows, RemoteWindows } from './health-sharing.ts';
import { nextState, scoreOf, scoreParts, weightMultiplier } from './health-state.ts';
import { type BucketRow, summarize } from './health-window.ts';

/** Requests per minute are read over the last minute even when the window is shorter: buckets are kept as long. */
const MINUTE_MS = 60_000;

/**
 * This replica's rows of every target inside the window, and its flow (in flight, use of the last minute);
 * buckets older than both are forgotten.
 */
export function localWindows(
  entries: ReadonlyMap<string, HealthEntry>,
  options: { now: number; windowMs: number },
): { rows: Map<string, BucketRow[]>; flows: Map<string, LocalFlow> } {
  const { now, windowMs } = options;
  const rows = new Map<string, BucketRow[]>();
  const flows = new Map<string, LocalFlow>();
  for (const entry of entries.values()) {
    if (!entry.window) continue;
    entry.window.forget(now - Math.max(windowMs, MINUTE_MS));
    rows.set(entry.id, entry.window.since(now - windowMs));
    const { inflight, recordedRequests, recordedTokens } = entry.flow;
    flows.set(entry.id, {
      inflight,
      ...entry.window.use(now - MINUTE_MS),
      countedRequests: recordedRequests,
      countedTokens: recordedTokens,
    });
  }
  return { rows, flows };
}

/**
 * The periodic verdict (docs/routing-health.md): every target's state by its error rate over every replica's
 * rows, adopting the Failed verdicts of other replicas (and recovering when they end); then scores, latency
 * judged against the fastest target of the same model; then the views with their targets' stats added up.
 */
export function recomputeHealth(entries: HealthEntries, local: LocalWindows, remote: RemoteWindows): void {
  const { now, config } = local;
  const { window_ms: windowMs, bucket_ms: bucketMs } = config;
  const horizon = now - windowMs;
  for (const id of remote.rows.keys()) if (parseId(id)?.kind === 'target') entries.entry(id);
  for (const id of remote.failed.keys()) if (parseId(id)?.kind === 'target') entries.entry(id);
  for (const id of remote.flow.keys()) if (parseId(id)?.kind === 'target') entries.entry(id);

  for (const entry of entries.byId.values()) {
    if (entry.kind !== 'target') continue;
    const rows = [...(local.rows.get(entry.id) ?? []), ...(remote.rows.get(entry.id) ?? [])];
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
      config,
      now,
    );
    const failedElsewhere = remote.failed.get(entry.id);
    if (next.state !== 'failed' && failedElsewhere !== undefined && entry.recoveredAt < failedElsewhere) {
      // Another replica ejected it (or judged it Failed) since it last recovered here: out here too.
      next = { ...next, state: 'failed', since: now };
      entry.adopted = true;
    } else if (next.state === 'failed' && entry.adopted && failedElsewhere === undefined) {
      // The replica whose verdict this was saw its probes succeed: it recovers here as well.
      next = { state: 'recovering', since: now, countFrom: now };
    }
    entries.setState(entry, next, now, 'error rate');
    applyFlow(entry, local.flows.get(entry.id), remote.flow.get(entry.id));
  }
  scoreTargets(entries.byId, local, remote);
  for (const provider of entries.targetsOf.keys()) {
    const utilization = utilizationOf(provider, local, remote);
    entries.derive(provider, now, (view, targets) => {
      const rows = targets.flatMap((target) => target.rows);
      view.stats = summarize(rows, { from: now - windowMs, recentFrom: now - windowMs / 3 });
      view.parts = scoreParts(view.stats, { config, relativeLatency: 0, utilization });
    });
  }
}

/** A target's flow of every replica, as of this recompute; what this replica records from now on is added live. */
function applyFlow(
  entry: HealthEntry,
  own: LocalFlow | undefined,
  others: readonly [inflight: number, requests: number, tokens: number] | undefined,
): void {
  const flow = entry.flow;
  flow.othersInflight = others?.[0] ?? 0;
  flow.minuteRequests = (own?.requests ?? 0) + (others?.[1] ?? 0);
  flow.minuteTokens = (own?.tokens ?? 0) + (others?.[2] ?? 0);
  // A target first seen during this recompute has recorded nothing its rows hold: all it recorded is live.
  flow.countedRequests = own?.countedRequests ?? 0;
  flow.countedTokens = own?.countedTokens ?? 0;
}

/** Targets' scores after every target's stats are known: latency is judged against the fastest target of the same model. */
function scoreTargets(
  entries: ReadonlyMap<string, HealthEntry>,
  local: LocalWindows,
  remote: RemoteWindows,
): void {
  const { now, config } = local;
  const fastest = new Map<string, number>();
  for (const entry of entries.values()) {
    const ewma = entry.stats.ewmaMs;
    if (entry.kind !== 'target' || ewma === undefined) continue;
    const best = fastest.get(entry.model ?? '');
    if (best === undefined || ewma < best) fastest.set(entry.model ?? '', ewma);
  }
  for (const entry of entries.values()) {
    if (entry.kind !== 'target') continue;
    const best = fastest.get(entry.model ?? '');
    const ewma = entry.stats.ewmaMs;
    const relativeLatency = best && ewma !== undefined ? (ewma - best) / best : 0;
    entry.parts = scoreParts(entry.stats, {
      config,
      relativeLatency,
      utilization: utilizationOf(entry.provider, local, remote),
    });
    entry.score = scoreOf(entry.parts, config);
    entry.multiplier = weightMultiplier(entry.state, entry.score, { config, now });
  }
}

/** A provider's in-flight requests against its concurrency, summed over every replica. */
function utilizationOf(provider: string, local: LocalWindows, remote: RemoteWindows): number {
  const mine = local.load.get(provider);
  const others = remote.load.get(provider);
  const inflight = (mine?.inflight ?? 0) + (others?.[0] ?? 0);
  const capacity = (mine?.capacity ?? 0) + (others?.[1] ?? 0);
  return capacity > 0 ? inflight / capacity : 0;
}
