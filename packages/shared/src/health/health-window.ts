/**
 * What one replica measured of one target, in time buckets. A bucket is a row of numbers so that a replica's
 * whole window crosses the store as compact JSON: `[start, requests, failures, latency sum ms, latency count,
 * …latency histogram]`. Rows of several replicas for the same bucket simply add up.
 */
export type BucketRow = number[];

/** Upper bounds (ms) of the latency histogram: percentiles are read from it, interpolated within a bucket. */
const LATENCY_BOUNDS_MS = [10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, Infinity];
const HEADER = 5;

export interface Outcome {
  /** An error that says something about the target (5xx, 429, a timeout, no connection). */
  failure: boolean;
  /**
   * Whether a failure counts toward ejection's streak (`consecutive_failures`): 5xx, timeouts and connection
   * errors do; a 429 (the upstream limiting its callers, not down) counts in the error rate only. Default: yes.
   */
  ejects?: boolean;
  /** How long the attempt took; successes only (a failure's latency says little). */
  latencyMs?: number | undefined;
}

/** One target's buckets on this replica: recording is O(1) and touches one row. */
export class TargetWindow {
  private readonly rows = new Map<number, BucketRow>();

  record(now: number, bucketMs: number, outcome: Outcome): void {
    const start = now - (now % bucketMs);
    let row = this.rows.get(start);
    if (!row) {
      row = new Array<number>(HEADER + LATENCY_BOUNDS_MS.length).fill(0);
      row[0] = start;
      this.rows.set(start, row);
    }
    row[1]! += 1;
    if (outcome.failure) row[2]! += 1;
    else if (outcome.latencyMs !== undefined) {
      row[3]! += outcome.latencyMs;
      row[4]! += 1;
      const index = LATENCY_BOUNDS_MS.findIndex((bound) => outcome.latencyMs! <= bound);
      row[HEADER + index]! += 1;
    }
  }

  /** Rows whose bucket started after `horizon`; older ones are forgotten. */
  since(horizon: number): BucketRow[] {
    const kept: BucketRow[] = [];
    for (const [start, row] of this.rows) {
      if (start <= horizon) this.rows.delete(start);
      else kept.push(row);
    }
    return kept;
  }
}

export interface WindowStats {
  requests: number;
  failures: number;
  errorRate: number;
  /** The same over the most recent third of the window: the trend (momentum) is the difference. */
  recentRequests: number;
  recentFailures: number;
  p50Ms: number | undefined;
  p95Ms: number | undefined;
  /** Exponentially weighted mean of the buckets' mean latencies, oldest first (α 0.3). */
  ewmaMs: number | undefined;
}

const EWMA_ALPHA = 0.3;

/** Adds up rows (of any replicas) that started at or after `from`. */
export function summarize(
  rows: readonly BucketRow[],
  options: { from: number; recentFrom: number },
): WindowStats {
  let requests = 0;
  let failures = 0;
  let recentRequests = 0;
  let recentFailures = 0;
  const histogram = new Array<number>(LATENCY_BOUNDS_MS.length).fill(0);
  const latencyByStart = new Map<number, [sum: number, count: number]>();
  for (const row of rows) {
    const start = row[0]!;
    if (start < options.from) continue;
    requests += row[1]!;
    failures += row[2]!;
    if (start >= options.recentFrom) {
      recentRequests += row[1]!;
      recentFailures += row[2]!;
    }
    if (row[4]! > 0) {
      const latency = latencyByStart.get(start) ?? [0, 0];
      latency[0] += row[3]!;
      latency[1] += row[4]!;
      latencyByStart.set(start, latency);
      for (let index = 0; index < histogram.length; index++) histogram[index]! += row[HEADER + index] ?? 0;
    }
  }
  let ewmaMs: number | undefined;
  for (const start of [...latencyByStart.keys()].sort((left, right) => left - right)) {
    const [sum, count] = latencyByStart.get(start)!;
    const mean = sum / count;
    ewmaMs = ewmaMs === undefined ? mean : EWMA_ALPHA * mean + (1 - EWMA_ALPHA) * ewmaMs;
  }
  return {
    requests,
    failures,
    errorRate: requests === 0 ? 0 : failures / requests,
    recentRequests,
    recentFailures,
    p50Ms: percentile(histogram, 0.5),
    p95Ms: percentile(histogram, 0.95),
    ewmaMs,
  };
}

/** The latency below which a share of the samples lies, interpolated linearly inside its bucket. */
function percentile(histogram: readonly number[], share: number): number | undefined {
  const total = histogram.reduce((sum, count) => sum + count, 0);
  if (total === 0) return undefined;
  const rank = share * total;
  let seen = 0;
  for (let index = 0; index < histogram.length; index++) {
    const count = histogram[index]!;
    if (count > 0 && seen + count >= rank) {
      const low = index === 0 ? 0 : LATENCY_BOUNDS_MS[index - 1]!;
      const high = LATENCY_BOUNDS_MS[index]!;
      if (high === Infinity) return low;
      return low + ((rank - seen) / count) * (high - low);
    }
    seen += count;
  }
  return undefined;
}
