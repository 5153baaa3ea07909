import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync, type SQLInputValue, type SQLOutputValue, type StatementSync } from 'node:sqlite';
import type { DroppedQuery, DroppedRow } from '../requests/dropped-counts.ts';
import type { LogQuery, LogStatsQuery } from '../requests/log-filter.ts';
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
import { type LogPage, type LogStats, sortBuckets } from '../requests/log-store.ts';
import { type SpendQuery, type SpendReport, toSpendReport } from '../requests/spend-query.ts';

/** The file in the data directory that holds the request log. */
export const SQLITE_LOG_FILE_NAME = 'request-logs.sqlite';

export interface SqliteLogDatabaseOptions {
  /** Embedded mode's data directory (GATEWAY_DATA_DIR); created if missing. */
  dataDir: string;
  /** Keep an FTS5 trigram index of the content for `q` (built now if missing); false by default. */
  textSearchIndex?: boolean;
}

const SCHEMA = `
PRAGMA journal_mode = WAL;
PRAGMA synchronous = NORMAL;
PRAGMA busy_timeout = 5000;
CREATE TABLE IF NOT EXISTS request_logs (
  "id" TEXT NOT NULL UNIQUE, "time" INTEGER NOT NULL, "surface" TEXT NOT NULL, "route" TEXT NOT NULL,
  "provider" TEXT, "model" TEXT, "requested_model" TEXT, "status" INTEGER NOT NULL, "error_type" TEXT,
  "error_message" TEXT, "upstream_status" INTEGER, "upstream_body" TEXT,
  "latency_ms" REAL NOT NULL, "time_to_first_token_ms" REAL,
  "input_tokens" INTEGER NOT NULL, "output_tokens" INTEGER NOT NULL, "cached_tokens" INTEGER NOT NULL,
  "reasoning_tokens" INTEGER NOT NULL, "cost" REAL NOT NULL, "cost_breakdown" TEXT,
  "virtual_key_id" TEXT, "virtual_key_name" TEXT, "team_id" TEXT, "customer_id" TEXT, "user_id" TEXT,
  "business_unit_id" TEXT,
  "selected_key_id" TEXT, "attempts" TEXT, "fallback_index" INTEGER, "routing" TEXT,
  "cache_outcome" TEXT, "guardrail_outcome" TEXT,
  "request_content" TEXT, "response_content" TEXT, "content_truncated" INTEGER NOT NULL, "trace_id" TEXT
);
CREATE INDEX IF NOT EXISTS request_logs_time ON request_logs ("time", "id");
CREATE INDEX IF NOT EXISTS request_logs_provider ON request_logs ("provider", "time");
CREATE INDEX IF NOT EXISTS request_logs_model ON request_logs ("model", "time");
CREATE INDEX IF NOT EXISTS request_logs_status ON request_logs ("status", "time");
CREATE INDEX IF NOT EXISTS request_logs_virtual_key ON request_logs ("virtual_key_id", "time");
CREATE TABLE IF NOT EXISTS dropped_counts (
  "bucket_start" INTEGER NOT NULL, "reason" TEXT NOT NULL, "source" TEXT NOT NULL, "count" INTEGER NOT NULL,
  PRIMARY KEY ("bucket_start", "reason", "source")
);
`;

/** Substring search over the content: a trigram index, kept by triggers (records are never updated). */
const TEXT_INDEX_SCHEMA = `
CREATE VIRTUAL TABLE request_logs_text USING fts5(
  request_content, response_content, content = 'request_logs', tokenize = 'trigram'
);
CREATE TRIGGER request_logs_text_insert AFTER INSERT ON request_logs BEGIN
  INSERT INTO request_logs_text (rowid, request_content, response_content)
  VALUES (new.rowid, new.request_content, new.response_content);
END;
CREATE TRIGGER request_logs_text_delete AFTER DELETE ON request_logs BEGIN
  INSERT INTO request_logs_text (request_logs_text, rowid, request_content, response_content)
  VALUES ('delete', old.rowid, old.request_content, old.response_content);
END;
INSERT INTO request_logs_text (request_logs_text) VALUES ('rebuild');
`;

/**
 * Rows per INSERT statement of a batch: one statement for many rows spares SQLite's per-statement work and
 * node:sqlite's per-call binding (about a quarter of a row's cost, measured); 32 rows of a record's columns stay
 * far below SQLite's limit of bound parameters.
 */
const ROWS_PER_INSERT = 32;

/** Trigram queries need three characters; a shorter text is looked for by scanning. */
const TRIGRAM = 3;

function dialect(textIndex: boolean): SqlDialect {
  return {
    table: 'request_logs',
    placeholder: () => '?',
    contentContains(text, bind) {
      if (textIndex && [...text].length >= TRIGRAM) {
        // A quoted phrase of the trigram index matches exactly where the text is a substring.
        const phrase = `"${text.replaceAll('"', '""')}"`;
        return `rowid IN (SELECT rowid FROM request_logs_text WHERE request_logs_text MATCH ${bind(phrase)})`;
      }
      const pattern = likePattern(text);
      return `("request_content" LIKE ${bind(pattern)} ESCAPE '\\' OR "response_content" LIKE ${bind(pattern)} ESCAPE '\\')`;
    },
    jsonText: (column, path) => `json_extract(${column}, '$.${path.join('.')}')`,
    latencyPercentiles:
      'percentile_cont("latency_ms", 0.5) AS p50, percentile_cont("latency_ms", 0.95) AS p95,' +
      ' percentile_cont("latency_ms", 0.99) AS p99',
  };
}

/** Columns added after the first release, with their types: a log file written by an older gw gains them. */
const ADDED_COLUMNS: ReadonlyArray<readonly [keyof LogRecord, string]> = [
  ['business_unit_id', 'TEXT'],
  ['attempts', 'TEXT'],
  ['error_message', 'TEXT'],
  ['upstream_status', 'INTEGER'],
  ['upstream_body', 'TEXT'],
  ['routing', 'TEXT'],
  ['cost_breakdown', 'TEXT'],
];

function addMissingColumns(database: DatabaseSync): void {
  const present = new Set(
    database
      .prepare("SELECT name FROM pragma_table_info('request_logs')")
      .all()
      .map((row) => String(row.name)),
  );
  for (const [column, type] of ADDED_COLUMNS) {
    if (!present.has(column)) database.exec(`ALTER TABLE request_logs ADD COLUMN "${column}" ${type}`);
  }
}

/** What the store's thread asks of the database thread; each method runs synchronously there. */
export interface SqliteLogMethods {
  /** Records as `rowValues` lays them out: an array of each record's columns, in order. */
  insert(rows: SQLInputValue[][]): void;
  query(query: LogQuery): LogPage;
  get(id: string): LogRecord | undefined;
  stats(query: LogStatsQuery): LogStats;
  spend(query: SpendQuery): SpendReport;
  insertDropped(rows: DroppedRow[]): void;
  flagGuardrails(ids: string[]): void;
  /** Rows of dropped counts per bucket and reason, summed over sources. */
  dropped(query: DroppedQuery): Array<{ start: number; reason: string; count: number }>;
  /** Deletes at most `limit` records older than the time, in one transaction; answers how many. */
  deleteBatch(timeMs: number, limit: number): number;
  close(): void;
}

/**
 * The log file itself, driven synchronously through `node:sqlite`. It runs on its own thread
 * (sqlite-log-worker.ts): every call blocks the thread it runs on, for tens of milliseconds per batch.
 */
export class SqliteLogDatabase implements SqliteLogMethods {
  readonly #database: DatabaseSync;
  readonly #dialect: SqlDialect;
  readonly #insert: StatementSync;
  readonly #insertMany: StatementSync;
  readonly #get: StatementSync;
  readonly #deleteBatch: StatementSync;
  readonly #insertDropped: StatementSync;
  readonly #flagGuardrail: StatementSync;
  readonly #deleteDropped: StatementSync;

  private constructor(database: DatabaseSync, textIndex: boolean) {
    this.#database = database;
    this.#dialect = dialect(textIndex);
    const row = `(${LOG_RECORD_FIELDS.map(() => '?').join(', ')})`;
    const insert = (rows: number) =>
      database.prepare(
        `INSERT INTO request_logs (${SELECTED_COLUMNS}) VALUES ${Array(rows).fill(row).join(', ')}` +
          ' ON CONFLICT ("id") DO NOTHING',
      );
    this.#insert = insert(1);
    this.#insertMany = insert(ROWS_PER_INSERT);
    this.#get = database.prepare(`SELECT ${SELECTED_COLUMNS} FROM request_logs WHERE "id" = ?`);
    this.#deleteBatch = database.prepare(
      'DELETE FROM request_logs WHERE rowid IN (SELECT rowid FROM request_logs WHERE "time" < ? LIMIT ?)',
    );
    this.#insertDropped = database.prepare(
      'INSERT INTO dropped_counts ("bucket_start", "reason", "source", "count") VALUES (?, ?, ?, ?)' +
        ' ON CONFLICT DO UPDATE SET "count" = max("count", excluded."count")',
    );
    this.#flagGuardrail = database.prepare(
      `UPDATE request_logs SET "guardrail_outcome" = 'flagged' WHERE "id" = ?` +
        ` AND ("guardrail_outcome" IS NULL OR "guardrail_outcome" = 'passed')`,
    );
    this.#deleteDropped = database.prepare('DELETE FROM dropped_counts WHERE "bucket_start" < ?');
  }

  /** Opens (and creates when missing) the log file of the data directory. */
  static open(options: SqliteLogDatabaseOptions): SqliteLogDatabase {
    mkdirSync(options.dataDir, { recursive: true });
    const database = new DatabaseSync(path.join(options.dataDir, SQLITE_LOG_FILE_NAME));
    try {
      database.exec(SCHEMA);
      addMissingColumns(database);
      const hasIndex = () =>
        database.prepare("SELECT 1 FROM sqlite_master WHERE name = 'request_logs_text'").get() !== undefined;
      if (options.textSearchIndex && !hasIndex()) database.exec(`BEGIN; ${TEXT_INDEX_SCHEMA} COMMIT;`);
      // An index created by an earlier opening is kept up to date by its triggers, so queries use it.
      return new SqliteLogDatabase(database, hasIndex());
    } catch (error) {
      database.close();
      throw error;
    }
  }

  insert(rows: SQLInputValue[][]): void {
    this.#database.exec('BEGIN');
    try {
      let index = 0;
      for (; index + ROWS_PER_INSERT <= rows.length; index += ROWS_PER_INSERT) {
        // concat, not flat(): V8 copies whole arrays of plain values ten times faster that way.
        this.#insertMany.run(
          ...([] as SQLInputValue[]).concat(...rows.slice(index, index + ROWS_PER_INSERT)),
        );
      }
      for (; index < rows.length; index++) this.#insert.run(...rows[index]!);
      this.#database.exec('COMMIT');
    } catch (error) {
      this.#database.exec('ROLLBACK');
      throw error;
    }
  }

  query(query: LogQuery): LogPage {
    const statement = pageStatement(query, this.#dialect);
    const rows = this.#database.prepare(statement.text).all(...(statement.values as SQLInputValue[]));
    return toPage(rows.map(fromRow), query);
  }

  get(id: string): LogRecord | undefined {
    const row = this.#get.get(id);
    return row === undefined ? undefined : fromRow(row);
  }

  stats(query: LogStatsQuery): LogStats {
    const statement = statsStatement(query, this.#dialect);
    const rows = this.#database.prepare(statement.text).all(...(statement.values as SQLInputValue[]));
    return {
      bucket_ms: query.bucket_ms,
      group_by: query.group_by ?? null,
      buckets: sortBuckets(rows.map(toBucket)),
    };
  }

  spend(query: SpendQuery): SpendReport {
    const statement = spendStatement(query, this.#dialect);
    const rows = this.#database.prepare(statement.text).all(...(statement.values as SQLInputValue[]));
    return toSpendReport(query, rows);
  }

  flagGuardrails(ids: string[]): void {
    this.#database.exec('BEGIN');
    try {
      for (const id of ids) this.#flagGuardrail.run(id);
      this.#database.exec('COMMIT');
    } catch (error) {
      this.#database.exec('ROLLBACK');
      throw error;
    }
  }

  insertDropped(rows: DroppedRow[]): void {
    this.#database.exec('BEGIN');
    try {
      for (const row of rows) this.#insertDropped.run(row.bucket_start, row.reason, row.source, row.count);
      this.#database.exec('COMMIT');
    } catch (error) {
      this.#database.exec('ROLLBACK');
      throw error;
    }
  }

  dropped(query: DroppedQuery): Array<{ start: number; reason: string; count: number }> {
    const statement = droppedStatement(query, { table: 'dropped_counts', placeholder: () => '?' });
    const rows = this.#database.prepare(statement.text).all(...(statement.values as SQLInputValue[]));
    return rows as Array<{ start: number; reason: string; count: number }>;
  }

  deleteBatch(timeMs: number, limit: number): number {
    // Dropped counts are few (a row per minute, reason and process): deleted at once with the first batch.
    this.#deleteDropped.run(timeMs);
    return Number(this.#deleteBatch.run(timeMs, limit).changes);
  }

  close(): void {
    if (this.#database.isOpen) this.#database.close();
  }
}

/**
 * A record's values in column order (LOG_RECORD_FIELDS'), as SQLite stores them: `cost_breakdown`, `attempts`
 * and `routing` as JSON text (null without them), `content_truncated` as 0 or 1. Spelled out field by field
 * rather than looped over LOG_RECORD_FIELDS: a property read by a name from a list costs V8 a lookup each (about
 * two thirds of this function's time, and the writer's thread runs it once a record); a test holds the order to
 * LOG_RECORD_FIELDS.
 */
export function columnsOf(record: LogRecord): SQLInputValue[] {
  return [
    record.id,
    record.time,
    record.surface,
    record.route,
    record.provider,
    record.model,
    record.requested_model,
    record.status,
    record.error_type,
    record.error_message,
    record.upstream_status,
    record.upstream_body,
    record.latency_ms,
    record.time_to_first_token_ms,
    record.input_tokens,
    record.output_tokens,
    record.cached_tokens,
    record.reasoning_tokens,
    record.cost,
    record.cost_breakdown === null ? null : JSON.stringify(record.cost_breakdown),
    record.virtual_key_id,
    record.virtual_key_name,
    record.team_id,
    record.customer_id,
    record.user_id,
    record.business_unit_id,
    record.selected_key_id,
    record.attempts === null ? null : JSON.stringify(record.attempts),
    record.fallback_index,
    record.routing === undefined ? null : JSON.stringify(record.routing),
    record.cache_outcome,
    record.guardrail_outcome,
    record.request_content,
    record.response_content,
    record.content_truncated ? 1 : 0,
    record.trace_id,
  ];
}

/**
 * What `insert` takes: each record's columns, built on the writer's thread, so what crosses to the database's is
 * arrays of plain values: a structured clone of objects writes and reads every field's name with each record
 * (the SQLite thread spent half its time per record reading them back, by valgrind's instruction counts).
 */
export function rowValues(records: readonly LogRecord[]): SQLInputValue[][] {
  return records.map(columnsOf);
}

/** Rows are read back through the record schema; SQLite keeps booleans as 0 and 1. */
function fromRow(row: Record<string, SQLOutputValue>): LogRecord {
  return logRecordSchema.parse({ ...row, content_truncated: row['content_truncated'] === 1 });
}
