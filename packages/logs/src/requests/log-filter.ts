import { z } from 'zod';
import { decodeCursor, LOG_SORT_FIELDS } from './log-cursor.ts';
import { CACHE_OUTCOMES, GUARDRAIL_OUTCOMES } from './log-record.ts';

/** Status classes a filter can name; `4xx` is 400 to 499. */
const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** The dimensions stats can be grouped by. */
export const LOG_GROUP_FIELDS = [
  'provider',
  'model',
  'virtual_key_id',
  'virtual_key_name',
  'team_id',
  'error_type',
] as const;
export type LogGroupField = (typeof LOG_GROUP_FIELDS)[number];

/** Most buckets one stats call may ask for (per group), so a 1 s bucket over a year is refused up front. */
const MAX_STATS_BUCKETS = 10_000;

const epochMs = z.number().int().nonnegative();
const value = z.string().min(1).max(512);
const bound = z.number().nonnegative();

const filterShape = {
  /** Records at or after this time (epoch ms). */
  from: epochMs.optional(),
  /** Records before this time (epoch ms, exclusive). */
  to: epochMs.optional(),
  provider: value.optional(),
  model: value.optional(),
  status_class: z.enum(STATUS_CLASSES).optional(),
  status: z.number().int().min(100).max(599).optional(),
  error_type: value.optional(),
  virtual_key_id: value.optional(),
  virtual_key_name: value.optional(),
  cache_outcome: z.enum(CACHE_OUTCOMES).optional(),
  guardrail_outcome: z.enum(GUARDRAIL_OUTCOMES).optional(),
  team_id: value.optional(),
  customer_id: value.optional(),
  user_id: value.optional(),
  business_unit_id: value.optional(),
  /** The routing rule that sent the request, by its id or its name. */
  routing_rule: value.optional(),
  min_latency_ms: bound.optional(),
  max_latency_ms: bound.optional(),
  min_cost: bound.optional(),
  max_cost: bound.optional(),
  /** Case-insensitive substring of the request or response content. */
  q: z.string().min(1).max(256).optional(),
};

type FilterShape = { [K in keyof typeof filterShape]?: z.output<(typeof filterShape)[K]> };

function checkRanges(filter: FilterShape, context: z.RefinementCtx): void {
  const pairs = [
    ['from', 'to'],
    ['min_latency_ms', 'max_latency_ms'],
    ['min_cost', 'max_cost'],
  ] as const;
  for (const [low, high] of pairs) {
    const lowValue = filter[low];
    const highValue = filter[high];
    if (lowValue !== undefined && highValue !== undefined && highValue < lowValue) {
      context.addIssue({ code: 'custom', path: [high], message: `must not be below ${low}` });
    }
  }
}

/** Which records a query or stats call covers; every field narrows, all of them together. */
export const logFilterSchema = z.strictObject(filterShape).superRefine(checkRanges);
export type LogFilter = z.output<typeof logFilterSchema>;

/** A page of records: the filter, a sort, a page size and where the previous page ended. */
export const logQuerySchema = z
  .strictObject({
    ...filterShape,
    sort: z.enum(LOG_SORT_FIELDS).default('time'),
    order: z.enum(['asc', 'desc']).default('desc'),
    limit: z.number().int().min(1).max(1000).default(100),
    /** `next_cursor` of the previous page, with the same sort and order. */
    cursor: z.string().min(1).max(1024).optional(),
  })
  .superRefine((query, context) => {
    checkRanges(query, context);
    if (query.cursor === undefined) return;
    const cursor = decodeCursor(query.cursor);
    if (!cursor) {
      context.addIssue({ code: 'custom', path: ['cursor'], message: 'is not a cursor this API gave out' });
    } else if (cursor.sort !== query.sort || cursor.order !== query.order) {
      context.addIssue({
        code: 'custom',
        path: ['cursor'],
        message: `belongs to sort=${cursor.sort}&order=${cursor.order}, not sort=${query.sort}&order=${query.order}`,
      });
    }
  });
export type LogQuery = z.output<typeof logQuerySchema>;
export type LogQueryInput = z.input<typeof logQuerySchema>;

const statsShape = {
  /** Width of a time bucket; buckets start at multiples of it since the epoch. */
  bucket_ms: z
    .number()
    .int()
    .min(1000)
    .max(31 * 24 * 3_600_000)
    .default(3_600_000),
  group_by: z.enum(LOG_GROUP_FIELDS).optional(),
};

function checkBucketCount(stats: { filter?: FilterShape; bucket_ms: number }, context: z.RefinementCtx) {
  const { from, to } = stats.filter ?? {};
  if (from !== undefined && to !== undefined && (to - from) / stats.bucket_ms > MAX_STATS_BUCKETS) {
    context.addIssue({
      code: 'custom',
      path: ['bucket_ms'],
      message: `makes more than ${MAX_STATS_BUCKETS} buckets between from and to`,
    });
  }
}

/** Counts, error rate, latency percentiles, tokens and cost per time bucket, optionally per group. */
export const logStatsQuerySchema = z
  .strictObject({ filter: logFilterSchema.default({}), ...statsShape })
  .superRefine(checkBucketCount);
export type LogStatsQuery = z.output<typeof logStatsQuerySchema>;
export type LogStatsQueryInput = z.input<typeof logStatsQuerySchema>;

/** The parameters whose values are numbers; every other one stays a string. */
const NUMERIC_PARAMS = new Set([
  'from',
  'to',
  'status',
  'min_latency_ms',
  'max_latency_ms',
  'min_cost',
  'max_cost',
  'limit',
  'bucket_ms',
]);
const NUMBER_TEXT = /^-?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i;

/**
 * Turns query parameters (`URLSearchParams`, or the object of strings a framework parsed them into) into the
 * values the schemas check: an empty parameter is absent, a number parameter that reads as a number becomes
 * one (anything else stays text, so zod names it), and a repeated parameter becomes a list, which every
 * schema refuses by name.
 */
export function fromQueryParams(input: unknown): unknown {
  const entries =
    input instanceof URLSearchParams
      ? [...input]
      : typeof input === 'object' && input !== null && !Array.isArray(input)
        ? Object.entries(input)
        : undefined;
  if (!entries) return input;
  // A Map, then fromEntries: a parameter named __proto__ is an unknown key like any other.
  const values = new Map<string, unknown>();
  for (const [key, raw] of entries) {
    if (raw === '' || raw === undefined) continue;
    const parsed =
      typeof raw === 'string' && NUMERIC_PARAMS.has(key) && NUMBER_TEXT.test(raw) ? Number(raw) : raw;
    values.set(key, values.has(key) ? [values.get(key), parsed].flat() : parsed);
  }
  return Object.fromEntries(values);
}

/** `GET /api/logs?…`: validate `url.searchParams` (or express's `request.query`) with it; an issue's path is the parameter's name. */
export const logQueryParamsSchema = z.preprocess(fromQueryParams, logQuerySchema);

/** The filter's parameters alone, flat as in the URL (the live tail's). */
export const logFilterParamsSchema = z.preprocess(fromQueryParams, logFilterSchema);

/** `GET /api/logs/stats?…`: the filter's parameters, `bucket_ms` and `group_by`, flat as in the URL. */
export const logStatsParamsSchema = z.preprocess(
  fromQueryParams,
  z
    .strictObject({ ...filterShape, ...statsShape })
    .superRefine((flat, context) => {
      checkRanges(flat, context);
      checkBucketCount({ filter: flat, bucket_ms: flat.bucket_ms }, context);
    })
    .transform(
      ({ bucket_ms, group_by, ...filter }): LogStatsQuery => ({
        filter,
        bucket_ms,
        ...(group_by && { group_by }),
      }),
    ),
);
