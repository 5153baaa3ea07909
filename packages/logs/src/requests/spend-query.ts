import { z } from 'zod';
import { fromQueryParams } from './log-filter.ts';
import type { LogRecord } from './log-record.ts';

/** What spend can be grouped by, each with the record's field that holds it (`GET /api/spend?group_by=`). */
const SPEND_GROUP_COLUMNS = {
  virtual_key: 'virtual_key_id',
  team: 'team_id',
  customer: 'customer_id',
  user: 'user_id',
  business_unit: 'business_unit_id',
  model: 'model',
  provider: 'provider',
} as const satisfies Record<string, keyof LogRecord>;

export type SpendGroup = keyof typeof SPEND_GROUP_COLUMNS;
const SPEND_GROUPS = Object.keys(SPEND_GROUP_COLUMNS) as [SpendGroup, ...SpendGroup[]];

export function spendGroupColumn(group: SpendGroup): keyof LogRecord {
  return SPEND_GROUP_COLUMNS[group];
}

const epochMs = z.number().int().nonnegative();
const value = z.string().min(1).max(512);

const spendFilterShape = {
  virtual_key_id: value.optional(),
  team_id: value.optional(),
  customer_id: value.optional(),
};

/** Spend of the records in [from, to), grouped, optionally of one key, team or customer only. */
export const spendQuerySchema = z
  .strictObject({
    group_by: z.enum(SPEND_GROUPS),
    /** Records at or after this time (epoch ms). */
    from: epochMs,
    /** Records before this time (epoch ms, exclusive). */
    to: epochMs,
    ...spendFilterShape,
  })
  .refine((query) => query.to > query.from, { path: ['to'], message: 'must be after from' });
export type SpendQuery = z.output<typeof spendQuerySchema>;
export type SpendQueryInput = z.input<typeof spendQuerySchema>;

/** The figures of one group over the period. */
export interface SpendRow {
  /** The group's value (a key id, a team id, a model…); null for records without one (a refused request has no model). */
  group: string | null;
  /**
   * The key's name as its latest named record in the period had it (group_by virtual_key); `/api/spend` adds an
   * owner's name from governance.
   */
  name?: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  /** US dollars, to the micro-dollar: what governance charged the requests logged. */
  cost: number;
}

export type SpendTotal = Omit<SpendRow, 'group' | 'name'>;

export interface SpendReport {
  group_by: SpendGroup;
  from: number;
  to: number;
  /** By cost, highest first, then by group (null last). */
  rows: SpendRow[];
  total: SpendTotal;
}

/** Budgets count whole micro-dollars; a sum of the stored dollars is rounded back to them. */
const toMicroDollars = (dollars: number): number => Math.round(dollars * 1_000_000) / 1_000_000;

const figure = z.coerce.number();
const spendRowSchema = z.object({
  group: z.string().nullable(),
  name: z.string().nullable(),
  requests: figure,
  input_tokens: figure,
  output_tokens: figure,
  cached_tokens: figure,
  cost: figure,
});

function byCostThenGroup(left: SpendRow, right: SpendRow): number {
  if (left.cost !== right.cost) return right.cost - left.cost;
  if (left.group === right.group) return 0;
  if (left.group === null) return 1;
  if (right.group === null) return -1;
  return left.group < right.group ? -1 : 1;
}

/** The report answered from the rows of spendStatement (log-sql.ts), whatever the driver made of the sums. */
export function toSpendReport(query: SpendQuery, rawRows: readonly unknown[]): SpendReport {
  const rows = rawRows
    .map((raw): SpendRow => {
      const { name, cost, ...figures } = spendRowSchema.parse(raw);
      return { ...figures, ...(name !== null && { name }), cost: toMicroDollars(cost) };
    })
    .sort(byCostThenGroup);
  const total: SpendTotal = { requests: 0, input_tokens: 0, output_tokens: 0, cached_tokens: 0, cost: 0 };
  for (const row of rows) {
    total.requests += row.requests;
    total.input_tokens += row.input_tokens;
    total.output_tokens += row.output_tokens;
    total.cached_tokens += row.cached_tokens;
    total.cost += row.cost;
  }
  total.cost = toMicroDollars(total.cost);
  return { group_by: query.group_by, from: query.from, to: query.to, rows, total };
}

/** The calendar month (UTC) that holds the time: the period a spend report covers unless it names one. */
export function monthOf(timeMs: number): { from: number; to: number } {
  const time = new Date(timeMs);
  return {
    from: Date.UTC(time.getUTCFullYear(), time.getUTCMonth(), 1),
    to: Date.UTC(time.getUTCFullYear(), time.getUTCMonth() + 1, 1),
  };
}

/** A time parameter: epoch milliseconds, or an ISO 8601 date or date-time. */
const timeParam = z.union([
  epochMs,
  z.iso
    .datetime({ offset: true })
    .or(z.iso.date())
    .transform((text) => Date.parse(text)),
]);

/** The answer's format, when the URL says it (`Accept: text/csv` says it too). */
const SPEND_FORMATS = ['json', 'csv'] as const;

/**
 * `GET /api/spend?…`: group_by, from and to (ISO or epoch ms; the current UTC month by default, `now` deciding
 * which), the filters and `format`. A repeated or unknown parameter is refused by name.
 */
export function spendParamsSchema(now: () => number = Date.now) {
  return z.preprocess(
    fromQueryParams,
    z
      .strictObject({
        group_by: z.enum(SPEND_GROUPS),
        from: timeParam.optional(),
        to: timeParam.optional(),
        format: z.enum(SPEND_FORMATS).optional(),
        ...spendFilterShape,
      })
      .transform(({ format, from, to, ...rest }, context) => {
        const month = monthOf(now());
        const query = spendQuerySchema.safeParse({ ...rest, from: from ?? month.from, to: to ?? month.to });
        if (!query.success) {
          for (const issue of query.error.issues) context.addIssue({ ...issue, code: 'custom' });
          return z.NEVER;
        }
        return { query: query.data, format };
      }),
  );
}
