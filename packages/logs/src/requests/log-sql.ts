import { z } from 'zod';
import { DROPPED_BUCKET_MS } from './dropped-counts.ts';
import { decodeCursor, encodeCursor } from './log-cursor.ts';
import type { LogFilter, LogQuery, LogStatsQuery } from './log-filter.ts';
import { LOG_RECORD_FIELDS, type LogRecord } from './log-record.ts';
import type { LogPage, LogStatsBucket } from './log-store.ts';
import { type SpendQuery, spendGroupColumn } from './spend-query.ts';

/** What differs between the SQL of SQLite and of PostgreSQL for the statements both stores share. */
export interface SqlDialect {
  /** The table, qualified as the backend needs. */
  table: string;
  /** The text of the n-th bound value (1-based): `?` or `$n`. */
  placeholder(index: number): string;
  /** A condition true when either content contains the text, ignoring case. */
  contentContains(text: string, bind: (value: unknown) => string): string;
  /** The text at a path of the JSON a text column holds (null where the path or the JSON is null). */
  jsonText(column: string, path: readonly string[]): string;
  /** Selects the 50th, 95th and 99th latency percentiles as p50, p95 and p99. */
  latencyPercentiles: string;
}

/** A statement and the values of its placeholders. */
export interface Statement {
  text: string;
  values: unknown[];
}

/** Filter fields that select records equal to their value. */
export const EQUAL_FIELDS = [
  'provider',
  'model',
  'status',
  'error_type',
  'virtual_key_id',
  'virtual_key_name',
  'cache_outcome',
  'guardrail_outcome',
  'team_id',
  'customer_id',
  'user_id',
  'business_unit_id',
] as const satisfies ReadonlyArray<keyof LogFilter & keyof LogRecord>;

/** Filter fields that bound a record's field: the parameter, the comparison, the field. */
export const RANGE_FIELDS = [
  ['min_latency_ms', '>=', 'latency_ms'],
  ['max_latency_ms', '<=', 'latency_ms'],
  ['min_cost', '>=', 'cost'],
  ['max_cost', '<=', 'cost'],
  ['from', '>=', 'time'],
  ['to', '<', 'time'],
] as const satisfies ReadonlyArray<readonly [keyof LogFilter, string, keyof LogRecord]>;

/** Column names are quoted everywhere: `time` is a keyword in PostgreSQL. */
const quoted = (field: string): string => `"${field}"`;

export const SELECTED_COLUMNS = LOG_RECORD_FIELDS.map(quoted).join(', ');

/** Escapes LIKE's wildcards, for a pattern used with `ESCAPE '\'`. */
export function likePattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}

function binder(dialect: SqlDialect, values: unknown[]): (value: unknown) => string {
  return (value) => {
    values.push(value);
    return dialect.placeholder(values.length);
  };
}

function whereClause(filter: LogFilter, dialect: SqlDialect, bind: (value: unknown) => string): string[] {
  const conditions: string[] = [];
  for (const field of EQUAL_FIELDS) {
    const value = filter[field];
    if (value !== undefined) conditions.push(`${quoted(field)} = ${bind(value)}`);
  }
  for (const [field, operator, column] of RANGE_FIELDS) {
    const value = filter[field];
    if (value !== undefined) conditions.push(`${quoted(column)} ${operator} ${bind(value)}`);
  }
  if (filter.status_class !== undefined) {
    const low = Number(filter.status_class[0]) * 100;
    conditions.push(`"status" >= ${bind(low)} AND "status" < ${bind(low + 100)}`);
  }
  if (filter.q !== undefined) conditions.push(dialect.contentContains(filter.q, bind));
  if (filter.routing_rule !== undefined) {
    // Bound once per use: each of SQLite's `?` takes a value of its own.
    const value = filter.routing_rule;
    const ruleIs = (key: string) => `${dialect.jsonText('"routing"', ['rule', key])} = ${bind(value)}`;
    conditions.push(`(${ruleIs('id')} OR ${ruleIs('name')})`);
  }
  return conditions;
}

const where = (conditions: string[]): string =>
  conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;

/**
 * One page in keyset order: the records after the cursor's (sort value, id), one more than the limit so
 * the answer knows whether another page follows.
 */
export function pageStatement(query: LogQuery, dialect: SqlDialect): Statement {
  const values: unknown[] = [];
  const bind = binder(dialect, values);
  const conditions = whereClause(query, dialect, bind);
  const cursor = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  const sort = quoted(query.sort);
  if (cursor) {
    const after = query.order === 'desc' ? '<' : '>';
    conditions.push(`(${sort}, "id") ${after} (${bind(cursor.value)}, ${bind(cursor.id)})`);
  }
  const direction = query.order === 'desc' ? 'DESC' : 'ASC';
  return {
    text:
      `SELECT ${SELECTED_COLUMNS} FROM ${dialect.table}${where(conditions)}` +
      ` ORDER BY ${sort} ${direction}, "id" ${direction} LIMIT ${bind(query.limit + 1)}`,
    values,
  };
}

/** The page answered from the rows of pageStatement (already decoded). */
export function toPage(records: LogRecord[], query: LogQuery): LogPage {
  if (records.length <= query.limit) return { records, next_cursor: null };
  const page = records.slice(0, query.limit);
  const last = page[page.length - 1]!;
  return {
    records: page,
    next_cursor: encodeCursor({ sort: query.sort, order: query.order, value: last[query.sort], id: last.id }),
  };
}

/** Figures per bucket start and group value; rows come back as statsRowSchema reads them. */
export function statsStatement(stats: LogStatsQuery, dialect: SqlDialect): Statement {
  const values: unknown[] = [];
  const bind = binder(dialect, values);
  // CAST: SQLite binds a JS number as REAL, which would make this a float division.
  const width = () => `CAST(${bind(stats.bucket_ms)} AS BIGINT)`;
  const bucket = `("time" / ${width()}) * ${width()}`;
  const group = stats.group_by === undefined ? 'NULL' : quoted(stats.group_by);
  const conditions = whereClause(stats.filter, dialect, bind);
  return {
    text:
      `SELECT ${bucket} AS "start", ${group} AS "group", count(*) AS "count",` +
      ` count(*) FILTER (WHERE "status" >= 400) AS "errors", ${dialect.latencyPercentiles},` +
      ` sum("input_tokens") AS "input_tokens", sum("output_tokens") AS "output_tokens", sum("cost") AS "cost"` +
      ` FROM ${dialect.table}${where(conditions)} GROUP BY 1, 2`,
    values,
  };
}

/** Requests, tokens and cost per group over the period; rows come back as toSpendReport (spend-query.ts) reads them. */
export function spendStatement(query: SpendQuery, dialect: SqlDialect): Statement {
  const values: unknown[] = [];
  const bind = binder(dialect, values);
  const { group_by: groupBy, ...filter } = query;
  // A key's name as its latest named record in the period had it: a renamed key is one row, under its new name.
  const name =
    groupBy === 'virtual_key'
      ? `(SELECT "virtual_key_name" FROM ${dialect.table} AS "named" WHERE "named"."virtual_key_id" = "grouped"."virtual_key_id"` +
        ` AND "named"."virtual_key_name" IS NOT NULL` +
        ` AND "named"."time" >= ${bind(query.from)} AND "named"."time" < ${bind(query.to)} ORDER BY "named"."time" DESC LIMIT 1)`
      : 'NULL';
  // Bound after the name's values: SQLite's `?` take their values in the order they appear.
  const conditions = whereClause(filter, dialect, bind);
  return {
    text:
      `SELECT ${quoted(spendGroupColumn(groupBy))} AS "group", ${name} AS "name", count(*) AS "requests",` +
      ` sum("input_tokens") AS "input_tokens", sum("output_tokens") AS "output_tokens",` +
      ` sum("cached_tokens") AS "cached_tokens", sum("cost") AS "cost"` +
      ` FROM ${dialect.table} AS "grouped"${where(conditions)} GROUP BY 1`,
    values,
  };
}

/** Drivers answer sums as numbers or numeric strings depending on type; every figure is a number here. */
const figure = z.coerce.number();
const statsRowSchema = z.object({
  start: figure,
  group: z.string().nullable(),
  count: figure,
  errors: figure,
  p50: figure,
  p95: figure,
  p99: figure,
  input_tokens: figure,
  output_tokens: figure,
  cost: figure,
});

export function toBucket(row: unknown): LogStatsBucket {
  const { p50, p95, p99, ...figures } = statsRowSchema.parse(row);
  return {
    ...figures,
    error_rate: figures.errors / figures.count,
    latency_p50_ms: p50,
    latency_p95_ms: p95,
    latency_p99_ms: p99,
  };
}

/** Dropped counts summed over processes per bucket and reason (both stores; `dropped_counts` table). */
export function droppedStatement(
  query: { from?: number | undefined; to?: number | undefined; bucket_ms: number },
  options: { table: string; placeholder: (index: number) => string },
): Statement {
  const values: unknown[] = [query.bucket_ms];
  const bind = (value: unknown) => {
    values.push(value);
    return options.placeholder(values.length);
  };
  const conditions: string[] = [];
  // A row counts a whole minute: the minute that contains `from` overlaps the range and is in it.
  if (query.from !== undefined) conditions.push(`"bucket_start" > ${bind(query.from - DROPPED_BUCKET_MS)}`);
  if (query.to !== undefined) conditions.push(`"bucket_start" < ${bind(query.to)}`);
  const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  return {
    text:
      // A modulo, not a division: SQLite binds a JS number as REAL and would not divide as integers.
      `SELECT "bucket_start" - ("bucket_start" % ${options.placeholder(1)}) AS "start", "reason",` +
      ` SUM("count") AS "count" FROM ${options.table} ${where} GROUP BY 1, 2`,
    values,
  };
}
