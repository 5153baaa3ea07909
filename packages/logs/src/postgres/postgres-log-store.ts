import { escapeIdentifier, Pool, TypeOverrides, types } from 'pg';
import {
  type DroppedCounts,
  type DroppedQueryInput,
  type DroppedRow,
  droppedCountsOf,
  droppedQuerySchema,
} from '../requests/dropped-counts.ts';
import {
  type LogQueryInput,
  type LogStatsQueryInput,
  logQuerySchema,
  logStatsQuerySchema,
} from '../requests/log-filter.ts';
import { LOG_RECORD_FIELDS, type LogRecord, logRecordSchema } from '../requests/log-record.ts';
import {
  droppedStatement,
  likePattern,
  pageStatement,
  SELECTED_COLUMNS,
  type SqlDialect,
  spendStatement,
  statsStatement,
  toBucket,
  toPage,
} from '../requests/log-sql.ts';
import { type LogPage, type LogStats, type LogStore, sortBuckets } from '../requests/log-store.ts';
import {
  type SpendQueryInput,
  type SpendReport,
  spendQuerySchema,
  toSpendReport,
} from '../requests/spend-query.ts';
import { migrate, POSTGRES_COLUMNS, type TextSearch } from './postgres-schema.ts';

export interface PostgresLogStoreOptions {
  /** `postgres://user:password@host:port/database`. */
  url: string;
  /** The schema that holds the table; `public` by default. Created if missing. */
  schema?: string;
  /** Connections in the pool; 4 by default (one writer, the rest for queries). */
  poolSize?: number;
  /**
   * Index the content for `q` with pg_trgm (when the extension can be created). False by default: the two
   * trigram indexes cut the insert rate about fivefold (docs/logs.md), and `q` is answered by scanning the
   * rows the time range and other filters leave.
   */
  textSearchIndex?: boolean;
  /** Records one retention statement deletes; 5,000 by default. */
  deleteBatchSize?: number;
  /** Told about errors of idle connections (a restarted server), which have no caller to throw to. */
  onError?: (error: unknown) => void;
}

/** bigint columns (time, tokens, counts) as numbers: every value gw stores is below 2^53. */
const typeParsers = new TypeOverrides();
typeParsers.setTypeParser(types.builtins.INT8, Number);

const LATENCY_PERCENTILES = [
  ['p50', 0.5],
  ['p95', 0.95],
  ['p99', 0.99],
] as const;

/**
 * The request log of cluster mode, on PostgreSQL through a `pg` Pool. Inserts are one statement per batch,
 * whatever its size (the values travel as one array per column, expanded by `unnest`).
 */
export class PostgresLogStore implements LogStore {
  readonly #pool: Pool;
  readonly #table: string;
  readonly #droppedTable: string;
  readonly #dialect: SqlDialect;
  readonly #insertText: string;
  readonly #deleteBatchSize: number;
  /** How `q` is answered here; a composition root may warn when it is `scan`. */
  readonly textSearch: TextSearch;

  private constructor(pool: Pool, table: string, textSearch: TextSearch, options: PostgresLogStoreOptions) {
    this.#pool = pool;
    this.#table = table;
    this.#droppedTable = table.replace(/request_logs$/, 'dropped_counts');
    this.textSearch = textSearch;
    this.#deleteBatchSize = options.deleteBatchSize ?? 5_000;
    this.#dialect = {
      table,
      placeholder: (index) => `$${index}`,
      contentContains(text, bind) {
        const pattern = bind(likePattern(text));
        return `("request_content" ILIKE ${pattern} ESCAPE '\\' OR "response_content" ILIKE ${pattern} ESCAPE '\\')`;
      },
      jsonText: (column, path) => `(${column}::json #>> '{${path.join(',')}}')`,
      latencyPercentiles: LATENCY_PERCENTILES.map(
        ([name, fraction]) => `percentile_cont(${fraction}) WITHIN GROUP (ORDER BY "latency_ms") AS ${name}`,
      ).join(', '),
    };
    const arrays = LOG_RECORD_FIELDS.map((field, index) => `$${index + 1}::${POSTGRES_COLUMNS[field][0]}[]`);
    this.#insertText =
      `INSERT INTO ${table} (${SELECTED_COLUMNS}) SELECT * FROM unnest(${arrays.join(', ')})` +
      ' ON CONFLICT ("id") DO NOTHING';
  }

  /** Connects and creates the schema, table and indexes that are missing. */
  static async open(options: PostgresLogStoreOptions): Promise<PostgresLogStore> {
    const pool = new Pool({
      connectionString: options.url,
      max: options.poolSize ?? 4,
      types: typeParsers,
      application_name: 'gw-logs',
    });
    pool.on('error', options.onError ?? ((error) => process.emitWarning(error)));
    const schema = options.schema ?? 'public';
    const table = `${escapeIdentifier(schema)}.request_logs`;
    try {
      const textSearch = await migrate(pool, {
        table,
        schema,
        textSearchIndex: options.textSearchIndex ?? false,
      });
      return new PostgresLogStore(pool, table, textSearch, options);
    } catch (error) {
      await pool.end();
      throw error;
    }
  }

  async insert(records: readonly LogRecord[]): Promise<void> {
    if (records.length === 0) return;
    const columns = LOG_RECORD_FIELDS.map((field) => records.map((record) => storable(record[field])));
    await this.#pool.query(this.#insertText, columns);
  }

  async query(query: LogQueryInput = {}): Promise<LogPage> {
    const parsed = logQuerySchema.parse(query);
    const statement = pageStatement(parsed, this.#dialect);
    const { rows } = await this.#pool.query(statement.text, statement.values);
    return toPage(
      rows.map((row) => logRecordSchema.parse(row)),
      parsed,
    );
  }

  async get(id: string): Promise<LogRecord | undefined> {
    const { rows } = await this.#pool.query(
      `SELECT ${SELECTED_COLUMNS} FROM ${this.#table} WHERE "id" = $1`,
      [id],
    );
    return rows[0] === undefined ? undefined : logRecordSchema.parse(rows[0]);
  }

  async stats(query: LogStatsQueryInput = {}): Promise<LogStats> {
    const parsed = logStatsQuerySchema.parse(query);
    const statement = statsStatement(parsed, this.#dialect);
    const { rows } = await this.#pool.query(statement.text, statement.values);
    return {
      bucket_ms: parsed.bucket_ms,
      group_by: parsed.group_by ?? null,
      buckets: sortBuckets(rows.map(toBucket)),
    };
  }

  async spend(query: SpendQueryInput): Promise<SpendReport> {
    const parsed = spendQuerySchema.parse(query);
    const statement = spendStatement(parsed, this.#dialect);
    const { rows } = await this.#pool.query(statement.text, statement.values);
    return toSpendReport(parsed, rows);
  }

  async insertDropped(rows: readonly DroppedRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.#pool.query(
      `INSERT INTO ${this.#droppedTable} ("bucket_start", "reason", "source", "count")` +
        ' SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[])' +
        ' ON CONFLICT ("bucket_start", "reason", "source") DO UPDATE' +
        ` SET "count" = GREATEST(${this.#droppedTable}."count", excluded."count")`,
      [
        rows.map((row) => row.bucket_start),
        rows.map((row) => row.reason),
        rows.map((row) => row.source),
        rows.map((row) => row.count),
      ],
    );
  }

  async flagGuardrails(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.#pool.query(
      `UPDATE ${this.#table} SET "guardrail_outcome" = 'flagged' WHERE "id" = ANY($1::text[])` +
        ` AND ("guardrail_outcome" IS NULL OR "guardrail_outcome" = 'passed')`,
      [ids],
    );
  }

  async dropped(query: DroppedQueryInput = {}): Promise<DroppedCounts> {
    const parsed = droppedQuerySchema.parse(query);
    const statement = droppedStatement(parsed, {
      table: this.#droppedTable,
      placeholder: (index) => `$${index}::bigint`,
    });
    const { rows } = await this.#pool.query(statement.text, statement.values);
    return droppedCountsOf(rows, parsed.bucket_ms);
  }

  /**
   * Batched deletes, each its own short transaction: `ctid = ANY(ARRAY(…))` makes each batch a TID scan of
   * rows the time index found, so no statement scans the table or holds its locks for long.
   */
  async deleteOlderThan(timeMs: number): Promise<number> {
    const text =
      `DELETE FROM ${this.#table} WHERE ctid = ANY(ARRAY(` +
      `SELECT ctid FROM ${this.#table} WHERE "time" < $1 LIMIT $2))`;
    await this.#pool.query(`DELETE FROM ${this.#droppedTable} WHERE "bucket_start" < $1`, [timeMs]);
    let deleted = 0;
    for (;;) {
      const { rowCount } = await this.#pool.query(text, [timeMs, this.#deleteBatchSize]);
      deleted += rowCount ?? 0;
      if ((rowCount ?? 0) < this.#deleteBatchSize) return deleted;
    }
  }

  /** Closes it as a resource of a composition root (its AsyncDisposableStack). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    if (!this.#pool.ended) await this.#pool.end();
  }
}

/** PostgreSQL text refuses NUL, which a model's answer may hold; it becomes U+FFFD rather than fail the batch. */
function storable(value: LogRecord[keyof LogRecord]): string | number | boolean | null {
  // A list (the targets tried) or an object (the routing decision) is kept as JSON text; an absent one as null.
  if (value === undefined || value === null) return null;
  const text = typeof value === 'object' ? JSON.stringify(value) : value;
  return typeof text === 'string' && text.includes('\u0000') ? text.replaceAll('\u0000', '\uFFFD') : text;
}
