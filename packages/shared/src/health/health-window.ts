/**
 * What one replica measured of one target, in time buckets. A bucket is a row of numbers so that a replica's
 * whole window crosses the store as compact JSON: `[start, requests, failures, latency sum ms, latency count,
 * …latency histogram, tokens, …time-to-first-token histogram]`. Rows of several replicas for the same bucket
 * simply add up. Columns are only ever appended (a replica of an earlier build reads the ones it knows, and a
 * missing one is 0), so trailing zeros may be left out on the wire.
 */
export type BucketRow = number[];

/**
 * Upper bounds (ms) of the latency and time-to-first-token histograms: percentiles are read from them,
 * interpolated within a bucket.
 */
const LATENCY_BOUNDS_MS = [10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, Infinity];
const BINS = LATENCY_BOUNDS_MS.length;
/** Start, requests, failures, latency sum and count: what every row holds, even trimmed. */
const HEADER = 5;
const TOKENS = HEADER + BINS;
const TTFT = TOKENS + 1;
const ROW_LENGTH = TTFT + BINS;

/** What an answer measured: a success's samples (a stream's arrive while it runs, `TargetWindow.measure`). */
export interface Samples {
  /** How long the attempt took, to the end of its answer; successes only (a failure's latency says little). */
  latencyMs?: number | undefined;
  /** Time to the first token: to a stream's first content chunk; a whole answer's is its latency. */
  ttftMs?: number | undefined;
  /** Tokens served (the usage's `total_tokens`). */
  tokens?: number | undefined;
}

export interface Outcome extends Samples {
  /** An error that says something about the target (5xx, 429, a timeout, no connection). */
  failure: boolean;
  /**
   * Whether a failure counts toward ejection's streak (`consecutive_failures`): 5xx, timeouts and connection
   * errors do; a 429 (the upstream limiting its callers, not down) counts in the error rate only. Default: yes.
   */
  ejects?: boolean;
}

/** The histogram bin of a duration. */
function binOf(ms: number): number {
  let index = 0;
  while (ms > LATENCY_BOUNDS_MS[index]!) index++;
  return index;
}

/** One target's buckets on this replica: recording is O(1) and touches one row. */
export class TargetWindow {
  private readonly rows = new Map<number, BucketRow>();

  /** Counts an attempt, with a success's samples. */
  record(now: number, bucketMs: number, outcome: Outcome): void {
    const row = this.rowAt(now, bucketMs);
    row[1]! += 1;
    if (outcome.failure) row[2]! += 1;
    else addSamples(row, outcome);
  }

  /** Samples of an answer already counted (a stream's time to first token, then its latency and tokens). */
  measure(now: number, bucketMs: number, samples: Samples): void {
    addSamples(this.rowAt(now, bucketMs), samples);
  }

  private rowAt(now: number, bucketMs: number): BucketRow {
    const start = now - (now % bucketMs);
    let row = this.rows.get(start);
    if (!row) {
      row = new Array<number>(ROW_LENGTH).fill(0);
      row[0] = start;
      this.rows.set(start, row);
    }
    return row;
  }

  /** Forgets the rows whose bucket started at or before `horizon`. */
  forget(horizon: number): void {
    for (const start of this.rows.keys()) if (start <= horizon) this.rows.delete(start);
  }

  /** Rows whose bucket started after `horizon`. */
  since(horizon: number): BucketRow[] {
    const kept: BucketRow[] = [];
    for (const [start, row] of this.rows) if (start > horizon) kept.push(row);
    return kept;
  }

  /** Requests and tokens of the buckets that started after `horizon`. */
  use(horizon: number): { requests: number; tokens: number } {
    let requests = 0;
    let tokens = 0;
    for (const [start, row] of this.rows) {
      if (start <= horizon) continue;
      requests += row[1]!;
      tokens += row[TOKENS]!;
    }
    return { requests, tokens };
  }
}

function addSamples(row: BucketRow, samples: Samples): void {
  const { latencyMs, ttftMs, tokens } = samples;
  if (latencyMs !== undefined) {
    row[3]! += latencyMs;
    row[4]! += 1;
    row[HEADER + binOf(latencyMs)]! += 1;
  }
  if (ttftMs !== undefined) row[TTFT + binOf(ttftMs)]! += 1;
  if (tokens !== undefined) row[TOKENS]! += tokens;
}

/** A row as it crosses the store: without its trailing zeros (a reader takes a missing column for 0). */
export function compactRow(row: BucketRow): BucketRow {
  let length = row.length;
  while (length > HEADER && row[length - 1] === 0) length--;
  return length === row.length ? row : row.slice(0, length);
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
  /** Time to first token, over every success that measured it. */
  ttftP95Ms: number | undefined;
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
  const histogram = new Array<number>(BINS).fill(0);
  const ttftHistogram = new Array<number>(BINS).fill(0);
  const latencyByStart = new Map<number, [sum: number, count: number]>();
  for (const row of rows) {
    const start = row[0]!;
    if (start < options.from) continue;
    requests += row[1] ?? 0;
    failures += row[2] ?? 0;
    if (start >= options.recentFrom) {
      recentRequests += row[1] ?? 0;
      recentFailures += row[2] ?? 0;
    }
    const latencies = row[4] ?? 0;
    if (latencies > 0) {
      const latency = latencyByStart.get(start) ?? [0, 0];
      latency[0] += row[3] ?? 0;
      latency[1] += latencies;
      latencyByStart.set(start, latency);
      for (let index = 0; index < BINS; index++) histogram[index]! += row[HEADER + index] ?? 0;
    }
    for (let index = 0; index < BINS && TTFT + index < row.length; index++) {
      ttftHistogram[index]! += row[TTFT + index] ?? 0;
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
    ttftP95Ms: percentile(ttftHistogram, 0.95),
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
