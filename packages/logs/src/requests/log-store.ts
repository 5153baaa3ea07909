import type { DroppedCounts, DroppedQueryInput, DroppedRow } from './dropped-counts.ts';
import type { LogGroupField, LogQueryInput, LogStatsQueryInput } from './log-filter.ts';
import type { LogRecord } from './log-record.ts';
import type { SpendQueryInput, SpendReport } from './spend-query.ts';

/** One page of records and where the next one starts (null on the last page). */
export interface LogPage {
  records: LogRecord[];
  next_cursor: string | null;
}

/** The figures of one time bucket (of one group, when grouped). */
export interface LogStatsBucket {
  /** Start of the bucket, epoch ms: a multiple of bucket_ms. */
  start: number;
  /** The group's value (a provider, model or key id); null for records without one, or when not grouped. */
  group: string | null;
  count: number;
  /** Records answered with a status of 400 or more. */
  errors: number;
  /** errors / count. */
  error_rate: number;
  /** Latency percentiles, interpolated between the two nearest records (`percentile_cont`). */
  latency_p50_ms: number;
  latency_p95_ms: number;
  latency_p99_ms: number;
  input_tokens: number;
  output_tokens: number;
  cost: number;
}

export interface LogStats {
  bucket_ms: number;
  group_by: LogGroupField | null;
  /** Buckets with at least one record, by start then group (nulls first). */
  buckets: LogStatsBucket[];
}

/**
 * Where request logs are kept and queried: SQLite in embedded mode, PostgreSQL in cluster mode, both held to
 * one contract suite (`@gw/testkit` `runLogStoreContract`). Queries validate their input with the schemas of
 * log-filter.ts and throw its ZodError, which an HTTP caller answers with 400.
 */
export interface LogStore {
  /** Adds records in one transaction. A record whose id is already stored is ignored (redelivery is safe). */
  insert(records: readonly LogRecord[]): Promise<void>;
  /** A page of records matching the filter, in the query's order (ties broken by id, the same way). */
  query(query?: LogQueryInput): Promise<LogPage>;
  get(id: string): Promise<LogRecord | undefined>;
  stats(query?: LogStatsQueryInput): Promise<LogStats>;
  /**
   * Requests, tokens and cost per key, team, customer, user, business unit, model or provider over a period
   * (`GET /api/spend`): the records' `cost` is what governance charged, so the sums are what budgets were charged
   * for the requests logged.
   */
  spend(query: SpendQueryInput): Promise<SpendReport>;
  /**
   * Stores processes' dropped counts (each row a process's total for a minute and reason: the larger count of
   * a row already held is kept, so a repeated write changes nothing).
   */
  insertDropped(rows: readonly DroppedRow[]): Promise<void>;
  /**
   * Records an async guardrail rule flagged after they were written: their `guardrail_outcome` becomes
   * `flagged` unless it says more already (`redacted`, `blocked`). Ids not stored (yet) are skipped.
   */
  flagGuardrails(ids: readonly string[]): Promise<void>;
  /** Dropped counts by reason and time bucket, summed over every process (`/api/logs/dropped`). */
  dropped(query?: DroppedQueryInput): Promise<DroppedCounts>;
  /** Deletes every record (and dropped count) older than the time (epoch ms), in small batches; answers how many records. */
  deleteOlderThan(timeMs: number): Promise<number>;
  close(): Promise<void>;
}

/** Orders buckets the same way whatever the backend's collation: by start, then group with nulls first. */
export function sortBuckets(buckets: LogStatsBucket[]): LogStatsBucket[] {
  return buckets.sort((left, right) => {
    if (left.start !== right.start) return left.start - right.start;
    if (left.group === right.group) return 0;
    if (left.group === null) return -1;
    if (right.group === null) return 1;
    return left.group < right.group ? -1 : 1;
  });
}
