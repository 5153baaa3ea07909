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
import type { LogRecord } from '../requests/log-record.ts';
import type { LogPage, LogStats, LogStore } from '../requests/log-store.ts';
import { type SpendQueryInput, type SpendReport, spendQuerySchema } from '../requests/spend-query.ts';
import { rowValues, type SqliteLogDatabaseOptions, type SqliteLogMethods } from './sqlite-log-database.ts';
import { SqliteThread } from './sqlite-thread.ts';

export { SQLITE_LOG_FILE_NAME } from './sqlite-log-database.ts';

export interface SqliteLogStoreOptions extends SqliteLogDatabaseOptions {
  /** Records one retention statement deletes; inserts get their turn between batches. 2,000 by default. */
  deleteBatchSize?: number;
}

/**
 * The request log of embedded mode: one SQLite file in the data directory (`node:sqlite`, no service to run).
 * `node:sqlite` is synchronous, and a batch insert or a search takes tens of milliseconds, so the database
 * lives on a worker thread of its own: the gateway's thread only validates queries and passes messages.
 */
export class SqliteLogStore implements LogStore {
  readonly #thread: SqliteThread<SqliteLogMethods>;
  readonly #deleteBatchSize: number;

  private constructor(thread: SqliteThread<SqliteLogMethods>, options: SqliteLogStoreOptions) {
    this.#thread = thread;
    this.#deleteBatchSize = options.deleteBatchSize ?? 2_000;
  }

  /** Opens (and creates when missing) the log file of the data directory, on a new thread. */
  static async open(options: SqliteLogStoreOptions): Promise<SqliteLogStore> {
    const { deleteBatchSize: _, ...databaseOptions } = options;
    const thread = await SqliteThread.start<SqliteLogMethods>({
      script: new URL('./sqlite-log-worker.ts', import.meta.url),
      data: databaseOptions,
      what: 'request log',
      where: options.dataDir,
    });
    return new SqliteLogStore(thread, options);
  }

  async insert(records: readonly LogRecord[]): Promise<void> {
    if (records.length > 0) await this.#call('insert', rowValues(records));
  }

  async query(query: LogQueryInput = {}): Promise<LogPage> {
    // Validated on the caller’s thread: a bad query rejects with its ZodError, never reaching the database.
    return this.#call('query', logQuerySchema.parse(query));
  }

  async get(id: string): Promise<LogRecord | undefined> {
    return this.#call('get', id);
  }

  async stats(query: LogStatsQueryInput = {}): Promise<LogStats> {
    return this.#call('stats', logStatsQuerySchema.parse(query));
  }

  async spend(query: SpendQueryInput): Promise<SpendReport> {
    return this.#call('spend', spendQuerySchema.parse(query));
  }

  async insertDropped(rows: readonly DroppedRow[]): Promise<void> {
    if (rows.length > 0) await this.#call('insertDropped', [...rows]);
  }

  async flagGuardrails(ids: readonly string[]): Promise<void> {
    if (ids.length > 0) await this.#call('flagGuardrails', [...ids]);
  }

  async dropped(query: DroppedQueryInput = {}): Promise<DroppedCounts> {
    const parsed = droppedQuerySchema.parse(query);
    return droppedCountsOf(await this.#call('dropped', parsed), parsed.bucket_ms);
  }

  async deleteOlderThan(timeMs: number): Promise<number> {
    let deleted = 0;
    for (;;) {
      // One call per batch: the writer's inserts, queued meanwhile, run between two batches.
      const count = await this.#call('deleteBatch', timeMs, this.#deleteBatchSize);
      deleted += count;
      if (count < this.#deleteBatchSize) return deleted;
    }
  }

  /** Closes it as a resource of a composition root (its AsyncDisposableStack). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  close(): Promise<void> {
    return this.#thread.close();
  }

  #call<Method extends keyof SqliteLogMethods & string>(
    method: Method,
    ...args: Parameters<SqliteLogMethods[Method]>
  ): Promise<ReturnType<SqliteLogMethods[Method]>> {
    return this.#thread.call(method, ...args);
  }
}
