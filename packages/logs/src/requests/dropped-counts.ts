import { z } from 'zod';

/** Counts are kept per minute: the finest bucket `/api/logs/dropped` can answer. */
export const DROPPED_BUCKET_MS = 60_000;

/**
 * What one process counted for one reason in one minute. `count` is that process's total for the minute so far
 * (not an increment), so a row written twice (a retried batch, a redelivered stream entry) changes nothing:
 * stores keep the larger count of a (bucket_start, reason, source).
 */
export const droppedRowSchema = z.object({
  bucket_start: z.number().int().nonnegative(),
  /** Why (`provider_queue_full`, `connection_cap`, `log_buffer_full`…): a name gw chooses, never free text. */
  reason: z.string().min(1).max(128),
  /** The process that counted (`<hostname>:<pid>:<start time>`), so replicas' counts add up. */
  source: z.string().min(1).max(256),
  count: z.number().int().nonnegative(),
});
export type DroppedRow = z.output<typeof droppedRowSchema>;

/** Most buckets one dropped call may ask for, as for stats. */
const MAX_DROPPED_BUCKETS = 10_000;

const numberParam = (schema: z.ZodNumber) =>
  z.preprocess((value) => (typeof value === 'string' && value !== '' ? Number(value) : value), schema);

/** `GET /api/logs/dropped?from=&to=&bucket_ms=`: time range (epoch ms, `to` exclusive) and bucket width. */
export const droppedQuerySchema = z
  .strictObject({
    from: numberParam(z.number().int().nonnegative()).optional(),
    to: numberParam(z.number().int().nonnegative()).optional(),
    bucket_ms: numberParam(
      z
        .number()
        .int()
        .min(DROPPED_BUCKET_MS)
        .max(31 * 24 * 3_600_000),
    )
      .optional()
      .transform((value) => value ?? 3_600_000),
  })
  .superRefine((query, context) => {
    if (query.from !== undefined && query.to !== undefined) {
      if (query.to < query.from)
        context.addIssue({ code: 'custom', path: ['to'], message: 'must not be below from' });
      else if ((query.to - query.from) / query.bucket_ms > MAX_DROPPED_BUCKETS)
        context.addIssue({
          code: 'custom',
          path: ['bucket_ms'],
          message: `makes more than ${MAX_DROPPED_BUCKETS} buckets between from and to`,
        });
    }
  });
export type DroppedQuery = z.output<typeof droppedQuerySchema>;
export type DroppedQueryInput = z.input<typeof droppedQuerySchema>;

/** Dropped counts by time bucket and reason, summed over every process. */
export interface DroppedCounts {
  bucket_ms: number;
  /** Buckets with a count, by start then reason. */
  buckets: Array<{ start: number; reason: string; count: number }>;
  /** The sum of every bucket, by reason. */
  totals: Record<string, number>;
}

/** Sums a store's rows (already summed over sources) into the answer's shape. */
export function droppedCountsOf(
  rows: ReadonlyArray<{ start: number; reason: string; count: number }>,
  bucketMs: number,
): DroppedCounts {
  const buckets = rows
    .map((row) => ({ start: Number(row.start), reason: row.reason, count: Number(row.count) }))
    .sort((left, right) =>
      left.start !== right.start ? left.start - right.start : left.reason < right.reason ? -1 : 1,
    );
  const totals: Record<string, number> = {};
  for (const bucket of buckets) totals[bucket.reason] = (totals[bucket.reason] ?? 0) + bucket.count;
  return { bucket_ms: bucketMs, buckets, totals };
}

/** Distinct (minute, reason) pairs one tally holds before the oldest are forgotten (the sink is down). */
const MAX_PENDING = 10_000;

/**
 * Counts drops in one process, per minute and reason, until a writer persists them. `add` is synchronous and
 * cheap (a Map entry per minute and reason); a minute that is over is forgotten once its total is stored.
 */
export class DroppedTally {
  readonly source: string;
  readonly #counts = new Map<string, { row: DroppedRow; stored: number }>();

  constructor(source: string) {
    this.source = source;
  }

  add(reason: string, count = 1, now = Date.now()): void {
    if (count <= 0) return;
    const bucketStart = now - (now % DROPPED_BUCKET_MS);
    const key = `${bucketStart}|${reason}`;
    const held = this.#counts.get(key);
    if (held) {
      held.row.count += count;
      return;
    }
    if (this.#counts.size >= MAX_PENDING) {
      const oldest = this.#counts.keys().next().value;
      if (oldest !== undefined) this.#counts.delete(oldest);
    }
    const row = { bucket_start: bucketStart, reason, source: this.source, count };
    this.#counts.set(key, { row, stored: 0 });
  }

  /** Rows whose total changed since it was last stored. */
  pending(): DroppedRow[] {
    const rows: DroppedRow[] = [];
    for (const { row, stored } of this.#counts.values()) if (row.count !== stored) rows.push({ ...row });
    return rows;
  }

  /** The rows were stored; minutes that are over and fully stored are forgotten. */
  written(rows: readonly DroppedRow[], now = Date.now()): void {
    const current = now - (now % DROPPED_BUCKET_MS);
    for (const row of rows) {
      const key = `${row.bucket_start}|${row.reason}`;
      const held = this.#counts.get(key);
      if (!held) continue;
      held.stored = row.count;
      if (held.row.count === row.count && row.bucket_start < current) this.#counts.delete(key);
    }
  }
}
