import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import type { Cluster, Redis } from 'ioredis';
import { z } from 'zod';
import type { DroppedRow, DroppedTally } from '../requests/dropped-counts.ts';
import type { LogRecord } from '../requests/log-record.ts';
import type { LogSink } from '../requests/log-writer.ts';
import { decodeEntry, logStreamKey, type StreamEntry, streamEntrySchema } from './log-stream-entry.ts';

export interface RedisLogConsumerOptions {
  /**
   * A connection of its own: XREADGROUP BLOCK holds it while waiting. Its command timeout, if any, must be
   * longer than blockMs.
   */
  redis: Redis | Cluster;
  /** The deployment's key prefix (GW_REDIS_PREFIX), the producer's. */
  prefix: string;
  /** Where records go: the PostgreSQL LogStore. */
  store: LogSink;
  /** The consumer group every log worker joins; `log-writers` by default. */
  group?: string;
  /** This worker's name in the group, unique among the live ones; `<hostname>:<pid>` by default. */
  consumer?: string;
  /** Entries read at a time (each up to the producer's recordsPerEntry), inserted as one batch; 10 by default. */
  entriesPerRead?: number;
  /** Longest a read waits for new entries; 1,000 ms by default. Bounds how long close() takes. */
  blockMs?: number;
  /**
   * Entries another worker has held unacknowledged this long are taken over (XAUTOCLAIM): that worker died or
   * cannot write. 60 s by default; checked every claimIdleMs / 2. Workers silent for 10× as long with nothing
   * pending leave the group.
   */
  claimIdleMs?: number;
  /** Wait after a failure (Redis or the store) before trying again; 1,000 ms by default. */
  retryDelayMs?: number;
  /** Told about failures and undecodable entries, which have no caller to throw to. */
  onError?: (error: unknown) => void;
  /**
   * This process's dropped counts: stream entries lost before they were stored (`log_stream_lost`: trimmed or
   * deleted from the stream while pending, each up to the producer's recordsPerEntry records) and records that
   * could not be decoded (`log_invalid`), written to the store with the records, so `/api/logs/dropped` shows
   * them.
   */
  tally?: DroppedTally | undefined;
  /** Told about every such loss as it is found (a metric). */
  onDrop?: ((reason: ConsumerDropReason, count: number) => void) | undefined;
}

/** What a log worker finds lost: stream entries gone before they were stored, records it cannot decode. */
export type ConsumerDropReason = 'stream_lost' | 'invalid';

/** What a consumer has done since it started. */
export interface RedisLogConsumerCounts {
  /** Records handed to the store (a redelivered one the store already held is counted again). */
  inserted: number;
  /** Records that did not decode (an undecodable entry counts one); acknowledged and skipped. */
  invalid: number;
  /** Entries delivered to a worker, then trimmed from the stream (MAXLEN) before any worker stored them. */
  lostEntries: number;
  /** Entries taken over from other workers. */
  claimedEntries: number;
}

const readReplySchema = z.array(z.tuple([z.string(), z.array(streamEntrySchema)])).nullable();
const claimReplySchema = z.tuple([z.string(), z.array(streamEntrySchema)]).rest(z.array(z.string()));
const consumersReplySchema = z.array(z.array(z.union([z.string(), z.number()])));

/**
 * The log worker of cluster mode: reads a consumer group of the producer's stream and inserts batches into
 * the store, acknowledging entries only once the insert succeeded, so a crash or a failed insert leaves them
 * pending for this worker's next read or another worker's claim (delivery is at least once; stores ignore
 * ids they hold). Runs from `start` until `close`.
 */
export class RedisLogConsumer {
  readonly #redis: Redis | Cluster;
  readonly #store: LogSink;
  readonly #key: string;
  readonly #group: string;
  readonly #consumer: string;
  readonly #entriesPerRead: number;
  readonly #blockMs: number;
  readonly #claimIdleMs: number;
  readonly #retryDelayMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #tally: DroppedTally | undefined;
  readonly #onDrop: ((reason: ConsumerDropReason, count: number) => void) | undefined;
  readonly #stopping = new AbortController();
  readonly #counts: RedisLogConsumerCounts = { inserted: 0, invalid: 0, lostEntries: 0, claimedEntries: 0 };
  #running: Promise<void> = Promise.resolve();

  private constructor(options: RedisLogConsumerOptions) {
    this.#redis = options.redis;
    this.#store = options.store;
    this.#key = logStreamKey(options.prefix);
    this.#group = options.group ?? 'log-writers';
    this.#consumer = options.consumer ?? `${hostname()}:${process.pid}`;
    this.#entriesPerRead = options.entriesPerRead ?? 10;
    this.#blockMs = options.blockMs ?? 1_000;
    this.#claimIdleMs = options.claimIdleMs ?? 60_000;
    this.#retryDelayMs = options.retryDelayMs ?? 1_000;
    this.#onError = options.onError ?? ((error) => process.emitWarning(String(error)));
    this.#tally = options.tally;
    this.#onDrop = options.onDrop;
  }

  /** Counts a loss where an operator looks: the tally (stored with the next batch) and the metric. */
  #lost(reason: ConsumerDropReason, count: number): void {
    if (count <= 0) return;
    if (reason === 'stream_lost') this.#counts.lostEntries += count;
    else this.#counts.invalid += count;
    this.#tally?.add(`log_${reason}`, count);
    this.#onDrop?.(reason, count);
  }

  /** Starts reading; failures are reported to onError and retried, never thrown. */
  static start(options: RedisLogConsumerOptions): RedisLogConsumer {
    const consumer = new RedisLogConsumer(options);
    consumer.#running = consumer.#run();
    return consumer;
  }

  get counts(): Readonly<RedisLogConsumerCounts> {
    return { ...this.#counts };
  }

  /** Stops after the read and insert under way (at most blockMs plus one insert). */
  async close(): Promise<void> {
    this.#stopping.abort();
    await this.#running;
  }

  async #run(): Promise<void> {
    // First what this name was given and never acknowledged (a restart), then new entries.
    let backlog = true;
    let groupReady = false;
    let nextClaimAt = 0;
    while (!this.#stopping.signal.aborted) {
      try {
        if (!groupReady) groupReady = await this.#createGroup();
        if (Date.now() >= nextClaimAt) {
          await this.#claimAbandoned();
          nextClaimAt = Date.now() + this.#claimIdleMs / 2;
        }
        const entries = await this.#read(backlog ? '0' : '>');
        if (backlog && entries.length === 0) backlog = false;
        await this.#handle(entries);
      } catch (error) {
        if (this.#stopping.signal.aborted) return;
        this.#onError(error);
        if (String(error).includes('NOGROUP')) groupReady = false;
        backlog = true;
        await delay(this.#retryDelayMs, undefined, { signal: this.#stopping.signal }).catch(() => {});
      }
    }
  }

  /** From the stream's first entry, so records appended before any worker ran are stored too. */
  async #createGroup(): Promise<true> {
    try {
      await this.#redis.xgroup('CREATE', this.#key, this.#group, '0', 'MKSTREAM');
    } catch (error) {
      if (!String(error).includes('BUSYGROUP')) throw error;
    }
    return true;
  }

  async #read(from: '0' | '>'): Promise<StreamEntry[]> {
    const block = from === '>' ? ['BLOCK', this.#blockMs] : [];
    const reply = await this.#redis.call(
      'XREADGROUP',
      ...['GROUP', this.#group, this.#consumer, 'COUNT', this.#entriesPerRead, ...block],
      ...['STREAMS', this.#key, from],
    );
    return readReplySchema.parse(reply)?.[0]?.[1] ?? [];
  }

  /** Stores the records of the entries, then acknowledges them all (undecodable ones included). */
  async #handle(entries: StreamEntry[]): Promise<void> {
    const own = this.#tally?.pending() ?? [];
    if (entries.length === 0 && own.length === 0) return;
    const records: LogRecord[] = [];
    const dropped: DroppedRow[] = [];
    const flagged: string[] = [];
    for (const entry of entries) {
      if (entry[1] === null) {
        this.#lost('stream_lost', 1);
        continue;
      }
      const decoded = decodeEntry(entry);
      for (const record of decoded.records) records.push(record);
      for (const row of decoded.dropped) dropped.push(row);
      for (const id of decoded.flagged) flagged.push(id);
      for (const error of decoded.errors) this.#onError(error);
      this.#lost('invalid', decoded.errors.length);
    }
    // This worker's own counts travel with the rows the ingress replicas sent (each row is a total: a retry
    // after a failed insert writes the same rows again, harmlessly).
    dropped.push(...own);
    if (records.length > 0) await this.#store.insert(records);
    if (dropped.length > 0) await this.#store.insertDropped?.(dropped);
    if (own.length > 0) this.#tally?.written(own);
    // After the records: an entry read together with the records it flags finds them stored.
    if (flagged.length > 0) await this.#store.flagGuardrails?.(flagged);
    this.#counts.inserted += records.length;
    if (entries.length > 0) await this.#redis.xack(this.#key, this.#group, ...entries.map(([id]) => id));
  }

  /** Takes over and stores what dead or stuck workers hold; then lets long-silent, empty ones go. */
  async #claimAbandoned(): Promise<void> {
    let cursor = '0-0';
    do {
      const reply = await this.#redis.xautoclaim(
        this.#key,
        this.#group,
        this.#consumer,
        this.#claimIdleMs,
        cursor,
        'COUNT',
        this.#entriesPerRead,
      );
      const [next, entries, deleted = []] = claimReplySchema.parse(reply);
      this.#counts.claimedEntries += entries.length;
      this.#lost('stream_lost', deleted.length);
      await this.#handle(entries);
      cursor = next;
    } while (cursor !== '0-0' && !this.#stopping.signal.aborted);
    const consumers = consumersReplySchema.parse(
      await this.#redis.xinfo('CONSUMERS', this.#key, this.#group),
    );
    for (const fields of consumers) {
      const info = Object.fromEntries(
        fields.flatMap((value, index) => (index % 2 === 0 ? [[value, fields[index + 1]]] : [])),
      );
      const silent = Number(info['idle']) > this.#claimIdleMs * 10 && Number(info['pending']) === 0;
      if (silent && info['name'] !== this.#consumer) {
        await this.#redis.xgroup('DELCONSUMER', this.#key, this.#group, String(info['name']));
      }
    }
  }
}
