import { type LogStore, type SpendGroup, type SpendReport, spendParamsSchema } from '@gw/logs';
import { serviceUnavailable, validate } from '@gw/shared';
import type { AdminRoute } from '../http/admin-route.ts';
import { teamScopedLogFilter } from './logs-admin.ts';

export interface SpendAdminOptions {
  /** The request log store spend is summed from; none when logs are off here. */
  store?: LogStore | undefined;
  /** Why there is no store, as the 503 says it. */
  unavailable?: string | undefined;
  /** The clock that decides the current month (the default period). */
  now?: () => number;
  /** The resources of a governance collection (`teams`, `customers`…), whose names the rows are given. */
  list?: ((collection: string) => Promise<ReadonlyArray<{ id: string; name: string }>>) | undefined;
}

/** The governance collection that names a group's ids; keys are named by their records, models need none. */
const NAMED_BY: Partial<Record<SpendGroup, string>> = {
  team: 'teams',
  customer: 'customers',
  user: 'users',
  business_unit: 'business-units',
};

/**
 * The report with each owner's name as governance holds it now; a row whose owner was deleted keeps its id
 * alone. Keys keep the name of their latest record (a deleted key's too).
 */
async function named(report: SpendReport, options: SpendAdminOptions): Promise<SpendReport> {
  const collection = NAMED_BY[report.group_by];
  if (!collection || !options.list || report.rows.length === 0) return report;
  const names = new Map((await options.list(collection)).map((resource) => [resource.id, resource.name]));
  return {
    ...report,
    rows: report.rows.map((row) => {
      const name = row.group === null ? undefined : names.get(row.group);
      return name === undefined ? row : { ...row, name };
    }),
  };
}

const CSV_FIGURES = ['requests', 'input_tokens', 'output_tokens', 'cached_tokens', 'cost'] as const;

/**
 * One CSV cell (RFC 4180): quoted when it holds a comma, a quote or a line break. Text a spreadsheet would run
 * as a formula (`=`, `+`, `-`, `@` first: a key name is anyone's with `keys:write`) is prefixed with `'`.
 */
function csvCell(value: string | number | null | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return String(value);
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/**
 * The report as CSV: a header row (the first column named by the grouping: `virtual_key`, `model`…), then a row
 * per group; cost in dollars with six decimals (micro-dollars).
 */
export function spendCsv(report: SpendReport): string {
  const lines = [[report.group_by, 'name', ...CSV_FIGURES].join(',')];
  for (const row of report.rows) {
    lines.push(
      [
        row.group,
        row.name,
        row.requests,
        row.input_tokens,
        row.output_tokens,
        row.cached_tokens,
        row.cost.toFixed(6),
      ]
        .map(csvCell)
        .join(','),
    );
  }
  return `${lines.join('\r\n')}\r\n`;
}

async function* once(text: string): AsyncIterable<string> {
  yield text;
}

const wantsCsv = (format: string | undefined, accept: string | undefined): boolean =>
  format === 'csv' || (format === undefined && /(^|,)\s*text\/csv\b/i.test(accept ?? ''));

/**
 * `GET /api/spend` (docs/governance.md "Spend"): the request log's requests, tokens and charged cost per key,
 * team, customer, user, business unit, model or provider over a period, as JSON or CSV. A Developer sees its
 * teams' keys only, as in `/api/logs`.
 */
export function createSpendAdmin(options: SpendAdminOptions): AdminRoute[] {
  const params = spendParamsSchema(options.now);
  return [
    {
      method: 'GET',
      path: '/spend',
      permission: 'budgets:read',
      handle: async (request) => {
        if (!options.store)
          throw serviceUnavailable(options.unavailable ?? 'request logs are off on this gateway');
        const query = teamScopedLogFilter(request.principal, request.query ?? new URLSearchParams());
        const { query: spend, format } = validate(params, query);
        const report = await named(await options.store.spend(spend), options);
        if (!wantsCsv(format, request.accept)) return { status: 200, body: report };
        return {
          status: 200,
          body: undefined,
          stream: { contentType: 'text/csv; charset=utf-8', chunks: once(spendCsv(report)) },
        };
      },
    },
  ];
}
