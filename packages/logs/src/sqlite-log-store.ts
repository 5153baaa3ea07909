import { Worker } from 'node:worker_threads';
import {
  type DroppedCounts,
  type DroppedQueryInput,
  type DroppedRow,
  droppedCountsOf,
  droppedQuerySchema,
} from './dropped-counts.ts';
import {
  type LogQueryInput,
  type LogStatsQueryInput,
  logQuerySchema,
  logStatsQuerySchema,
} from './log-filter.ts';
import type { LogRecord } from './log-record.ts';
import type { LogPage, LogStats, LogStore } from './log-store.ts';
import type { SqliteLogDatabaseOptions, SqliteLogMethods } from './sqlite-log-database.ts';
import type { SqliteLogCall, SqliteLogReply } from './sqlite-log-worker.ts';

export { SQLITE_LOG_FILE_NAME } from './sqlite-log-database.ts';

export interface SqliteLogStoreOptions extends SqliteLogDatabaseOptions {
  /** Records one retention statement deletes; inserts get their turn between batches. 2,000 by default. */
  deleteBatchSize?: number;
}

interface Pending {
  resolve: (value: unknown) => void;
  reject: (error: Error) => void;
}

/**
 * The request log of embedded mode: one SQLite file in the data directory (`node:sqlite`, no service to run).
 * `node:sqlite` is synchronous, and a batch insert or a search takes tens of milliseconds, so the database
 * lives on a worker thread of its own: the gateway's thread only validates queries and passes messages.
 */
export class SqliteLogStore implements LogStore {
  readonly #worker: Worker;
  readonly #pending = new Map<number, Pending>();
  readonly #deleteBatchSize: number;
  #nextId = 1;
  #failure: Error | undefined;

  private constructor(worker: Worker, options: SqliteLogStoreOptions) {
    this.#worker = worker;
    this.#deleteBatchSize = options.deleteBatchSize ?? 2_000;
    worker.on('message', (reply: SqliteLogReply) => this.#settle(reply));
    worker.on('error', (error) => this.#fail(error));
    worker.on('exit', () => this.#fail(new Error('the request log thread has stopped')));
  }

  /** Opens (and creates when missing) the log file of the data directory, on a new thread. */
  static async open(options: SqliteLogStoreOptions): Promise<SqliteLogStore> {
    const { deleteBatchSize: _, ...databaseOptions } = options;
    const worker = new Worker(new URL('./sqlite-log-worker.ts', import.meta.url), {
      workerData: databaseOptions,
    });
    const opened = await new Promise<SqliteLogReply>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    if ('error' in opened) {
      await worker.terminate();
      throw new Error(`cannot open the request log in ${options.dataDir}: ${opened.error}`);
    }
    worker.unref();
    return new SqliteLogStore(worker, options);
  }

  async insert(records: readonly LogRecord[]): Promise<void> {
    if (records.length > 0) await this.#call('insert', [...records]);
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

  async insertDropped(rows: readonly DroppedRow[]): Promise<void> {
    if (rows.length > 0) await this.#call('insertDropped', [...rows]);
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

  async close(): Promise<void> {
    if (this.#failure) return;
    await this.#call('close');
    this.#failure = new Error('the request log is closed');
    await this.#worker.terminate();
  }

  #call<Method extends keyof SqliteLogMethods>(
    method: Method,
    ...args: Parameters<SqliteLogMethods[Method]>
  ): Promise<ReturnType<SqliteLogMethods[Method]>> {
    if (this.#failure) return Promise.reject(this.#failure);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      // The thread keeps the process alive only while a call waits for it.
      if (this.#pending.size === 0) this.#worker.ref();
      this.#pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      this.#worker.postMessage({ id, method, args } as SqliteLogCall);
    });
  }

  #settle(reply: SqliteLogReply): void {
    const pending = this.#pending.get(reply.id);
    if (!pending) return;
    this.#pending.delete(reply.id);
    if (this.#pending.size === 0) this.#worker.unref();
    if ('error' in reply) pending.reject(new Error(reply.error));
    else pending.resolve(reply.value);
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
  }
}
