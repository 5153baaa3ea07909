import type { Cluster, Redis } from 'ioredis';
import type { DroppedRow } from '../requests/dropped-counts.ts';
import type { LogRecord } from '../requests/log-record.ts';
import type { LogSink } from '../requests/log-writer.ts';
import { encodeDroppedEntry, encodeEntry, encodeFlaggedEntry, logStreamKey } from './log-stream-entry.ts';

export { logStreamKey } from './log-stream-entry.ts';
export { RedisLogConsumer } from './redis-log-consumer.ts';
export { RedisLogTail } from './redis-log-tail.ts';

export interface RedisLogProducerOptions {
  /** A connection the producer shares with others (it sends nothing that blocks). */
  redis: Redis | Cluster;
  /** The deployment's key prefix (GW_REDIS_PREFIX). */
  prefix: string;
  /**
   * About how many records the stream keeps: the bound on Redis memory while the log workers are down or
   * behind. Records trimmed after a worker read them, before it stored them, are counted there as lost
   * entries. 100,000 by default.
   */
  maxRecords?: number;
  /** Most records in one stream entry; a larger batch becomes several entries. 500 by default. */
  recordsPerEntry?: number;
}

/**
 * The ingress side of cluster mode's log queue: a LogSink that appends a writer's batch to a Redis stream as
 * entries of up to recordsPerEntry records (an entry per record costs Redis and both ends several times more),
 * pipelined in one round trip. A failed append rejects, so the LogWriter that feeds the producer retries the
 * batch (an outage shorter than its retryForMs loses nothing) and counts it dropped (write_failed) when Redis
 * stays down longer.
 */
export class RedisLogProducer implements LogSink {
  readonly #redis: Redis | Cluster;
  readonly #key: string;
  readonly #maxRecords: number;
  readonly #recordsPerEntry: number;

  constructor(options: RedisLogProducerOptions) {
    this.#redis = options.redis;
    this.#key = logStreamKey(options.prefix);
    this.#maxRecords = options.maxRecords ?? 100_000;
    this.#recordsPerEntry = options.recordsPerEntry ?? 500;
  }

  async insert(records: readonly LogRecord[]): Promise<void> {
    if (records.length === 0) return;
    const pipeline = this.#redis.pipeline();
    for (let start = 0; start < records.length; start += this.#recordsPerEntry) {
      const entry = records.slice(start, start + this.#recordsPerEntry);
      // MAXLEN counts entries: as many as hold maxRecords at this entry's size. Under load entries are full;
      // when quiet they are small and more of them are kept, so the stream holds about maxRecords either way.
      const maxEntries = Math.ceil(this.#maxRecords / entry.length);
      pipeline.xadd(this.#key, 'MAXLEN', '~', maxEntries, '*', ...encodeEntry(entry));
    }
    const results = (await pipeline.exec()) ?? [];
    const failure = results.find(([error]) => error !== null);
    if (failure) throw failure[0];
    // A retried batch may append some records twice: stores ignore an id they hold, so that is harmless.
  }

  /** Flagged ids travel the same stream, after the records they amend (the writer sends them later). */
  async flagGuardrails(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.#redis.xadd(this.#key, 'MAXLEN', '~', this.#maxRecords, '*', ...encodeFlaggedEntry(ids));
  }

  /** Dropped counts travel the same stream, as an entry of their own (rows are totals: a repeat is harmless). */
  async insertDropped(rows: readonly DroppedRow[]): Promise<void> {
    if (rows.length === 0) return;
    await this.#redis.xadd(this.#key, 'MAXLEN', '~', this.#maxRecords, '*', ...encodeDroppedEntry(rows));
  }
}
