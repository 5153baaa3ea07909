import { setTimeout as delay } from 'node:timers/promises';
import type { DroppedRow, DroppedTally } from './dropped-counts.ts';
import { applyContentPolicy, type ContentPolicy } from './log-content.ts';
import {
  boundRoutingDecision,
  type LogRecord,
  type LogRecordInput,
  logRecordSchema,
  MAX_NAME,
} from './log-record.ts';

/** Why a record never reached the sink. */
const LOG_DROP_REASONS = ['buffer_full', 'invalid', 'write_failed', 'closed'] as const;
export type LogDropReason = (typeof LOG_DROP_REASONS)[number];

/** Where a writer sends its batches: a LogStore, or cluster mode's RedisLogProducer. */
export interface LogSink {
  insert(records: readonly LogRecord[]): Promise<void>;
  /** Dropped counts, written by the same path as records (a LogStore, or the Redis stream). */
  insertDropped?(rows: readonly DroppedRow[]): Promise<void>;
  /** Records an async guardrail rule flagged after they left the writer (the same path, after them). */
  flagGuardrails?(ids: readonly string[]): Promise<void>;
}

export interface LogWriterOptions {
  sink: LogSink;
  /** Records waiting to be written; past it enqueue drops (buffer_full). 10,000 by default. */
  maxBuffered?: number;
  /** Records per write; a full batch is written at once. 1,000 by default. */
  batchSize?: number;
  /** Longest a record waits for a full batch before a partial one is written. 1,000 ms by default. */
  flushIntervalMs?: number;
  /** Keep request and response content; false keeps none, whatever enqueue is told. True by default. */
  content?: boolean;
  /** Most UTF-8 bytes kept of each of request and response content. 8 KiB by default. */
  contentMaxBytes?: number;
  /**
   * How long a batch that keeps failing is tried again (at each interval) before its records are dropped
   * (write_failed): a store or Redis outage shorter than this loses nothing while the buffer has room (past it,
   * new records are dropped as buffer_full). 60 s by default; a closing writer tries a batch 3 times at most.
   */
  retryForMs?: number;
  /** Writes of one batch before its records are dropped (write_failed), whatever the time. Unbounded by default. */
  maxAttempts?: number;
  /** The clock of retryForMs (tests move it). */
  now?: () => number;
  /** Told about refused records and failed writes, which have no caller to throw to. */
  onError?: (error: unknown) => void;
  /** Told about every drop as it happens (to count it in a metric). */
  onDrop?: (reason: LogDropReason, count: number) => void;
  /**
   * The process's dropped counts (requests refused for overload, spans and records dropped): written to the
   * sink with each interval's flush. The writer adds its own drops as `log_<reason>`.
   */
  tally?: DroppedTally;
  /** Told about each batch the sink accepted (the embedded live tail); never on a request's path. */
  onWritten?: (records: readonly LogRecord[]) => void;
}

export interface EnqueueOptions {
  /** False drops this record's content (a key that asked for no content logging). */
  content?: boolean;
  /** This record's content limit, in UTF-8 bytes of each content, instead of the writer's (a live setting). */
  contentMaxBytes?: number;
}

interface Batch {
  records: LogRecord[];
  attempts: number;
  /** When its first write failed. */
  failingSince?: number;
}

/** Writes of a batch a closing writer makes before it drops it: a shutdown is not held up by a dead sink. */
const CLOSING_ATTEMPTS = 3;

/**
 * Takes records off the request path: `enqueue` is synchronous, cheap and never throws; a bounded buffer is
 * written in batches, one write at a time, on size or interval. What cannot be kept is dropped and counted.
 * Memory holds at most maxBuffered records plus the batch being written.
 */
export class LogWriter {
  readonly #sink: LogSink;
  readonly #maxBuffered: number;
  readonly #batchSize: number;
  readonly #maxAttempts: number;
  readonly #retryForMs: number;
  readonly #now: () => number;
  readonly #retryDelayMs: number;
  readonly #content: ContentPolicy;
  readonly #onError: (error: unknown) => void;
  readonly #onDrop: ((reason: LogDropReason, count: number) => void) | undefined;
  readonly #tally: DroppedTally | undefined;
  readonly #onWritten: ((records: readonly LogRecord[]) => void) | undefined;
  readonly #timer: NodeJS.Timeout;
  readonly #dropped: Record<LogDropReason, number> = {
    buffer_full: 0,
    invalid: 0,
    write_failed: 0,
    closed: 0,
  };
  #buffer: LogRecord[] = [];
  /** Ids flagged after their record left the buffer, written after the records at the next interval. */
  #flagged: string[] = [];
  #current: Batch | undefined;
  #writing: Promise<void> | undefined;
  #scheduled = false;
  #closed = false;
  #written = 0;

  constructor(options: LogWriterOptions) {
    this.#sink = options.sink;
    this.#maxBuffered = options.maxBuffered ?? 10_000;
    this.#batchSize = options.batchSize ?? 1_000;
    this.#maxAttempts = options.maxAttempts ?? Number.POSITIVE_INFINITY;
    this.#retryForMs = options.retryForMs ?? 60_000;
    this.#now = options.now ?? Date.now;
    const flushIntervalMs = options.flushIntervalMs ?? 1_000;
    this.#retryDelayMs = Math.min(flushIntervalMs, 200);
    this.#content = { keep: options.content ?? true, maxBytes: options.contentMaxBytes ?? 8_192 };
    this.#onError = options.onError ?? ((error) => process.emitWarning(String(error)));
    this.#onDrop = options.onDrop;
    this.#tally = options.tally;
    this.#onWritten = options.onWritten;
    // Unref'd: a writer alone does not keep a process alive; close() writes what is left.
    this.#timer = setInterval(() => this.#write(true), flushIntervalMs).unref();
  }

  /** Buffers a record; false when it was dropped (counted under its reason). */
  enqueue(record: LogRecordInput, options: EnqueueOptions = {}): boolean {
    if (this.#closed) return this.#drop('closed');
    if (this.#buffer.length >= this.#maxBuffered) return this.#drop('buffer_full');
    const parsed = logRecordSchema.safeParse(record);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const error = new Error(`log record refused: ${issue?.path.join('.')}: ${issue?.message}`);
      quietly(() => this.#onError(error));
      return this.#drop('invalid');
    }
    return this.#push(parsed.data, options);
  }

  /**
   * Buffers a whole record built by typed code (the ingress's), without the schema pass that `enqueue` makes
   * (about two thirds of its cost): only the fields whose size comes from outside are cut to the schema's
   * bounds (the model names a caller or an upstream sent, the routing decision). False when it was dropped.
   */
  enqueueRecord(record: LogRecord, options: EnqueueOptions = {}): boolean {
    if (this.#closed) return this.#drop('closed');
    if (this.#buffer.length >= this.#maxBuffered) return this.#drop('buffer_full');
    if (record.model !== null && record.model.length > MAX_NAME)
      record.model = record.model.slice(0, MAX_NAME);
    if (record.requested_model !== null && record.requested_model.length > MAX_NAME)
      record.requested_model = record.requested_model.slice(0, MAX_NAME);
    if (record.routing) record.routing = boundRoutingDecision(record.routing);
    return this.#push(record, options);
  }

  /**
   * An async guardrail rule flagged a request whose record was enqueued: amended in the buffer while it
   * waits there, else sent to the sink after the records (bounded like the buffer; past it, not amended).
   */
  flagGuardrail(id: string): void {
    for (let index = this.#buffer.length - 1; index >= 0; index--) {
      const record = this.#buffer[index]!;
      if (record.id !== id) continue;
      if (record.guardrail_outcome === null || record.guardrail_outcome === 'passed')
        record.guardrail_outcome = 'flagged';
      return;
    }
    if (this.#closed || this.#flagged.length >= this.#maxBuffered) return;
    this.#flagged.push(id);
  }

  #push(record: LogRecord, options: EnqueueOptions): true {
    const keep = this.#content.keep && options.content !== false;
    const maxBytes = options.contentMaxBytes ?? this.#content.maxBytes;
    applyContentPolicy(record, { keep, maxBytes: keep ? maxBytes : 0 });
    this.#buffer.push(record);
    if (this.#buffer.length >= this.#batchSize && !this.#scheduled) {
      // Written on a later turn: the synchronous part of a write (building the statement, posting the batch
      // to SQLite's thread) must not run inside the request's enqueue.
      this.#scheduled = true;
      setImmediate(() => {
        this.#scheduled = false;
        this.#write(false);
      });
    }
    return true;
  }

  /** Records dropped so far, by reason. */
  get dropped(): Readonly<Record<LogDropReason, number>> {
    return { ...this.#dropped };
  }

  /** Records the sink has accepted so far. */
  get written(): number {
    return this.#written;
  }

  /** Records waiting to be written (not counting a batch being written). */
  get buffered(): number {
    return this.#buffer.length;
  }

  /** Writes everything buffered now; a batch that keeps failing ends dropped (write_failed). */
  async flush(): Promise<void> {
    // At least once: the dropped counts are written even when no record waits.
    do {
      this.#write(true);
      await this.#writing;
      if (this.#current !== undefined) await delay(this.#retryDelayMs);
    } while (this.#buffer.length > 0 || this.#current !== undefined || this.#writing !== undefined);
  }

  /** Stops taking records and writes the ones it holds. */
  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#timer);
    await this.flush();
  }

  /** Starts the one write loop unless it is running; `partial` also writes a batch short of batchSize. */
  #write(partial: boolean): void {
    if (this.#writing !== undefined) return;
    this.#writing = this.#drain(partial).finally(() => {
      this.#writing = undefined;
    });
  }

  async #drain(partial: boolean): Promise<void> {
    for (;;) {
      if (this.#current === undefined) {
        if (this.#buffer.length === 0 || (!partial && this.#buffer.length < this.#batchSize)) {
          if (partial) {
            await this.#writeDropped();
            await this.#writeFlagged();
          }
          return;
        }
        this.#current = { records: this.#buffer.splice(0, this.#batchSize), attempts: 0 };
      }
      const batch = this.#current;
      try {
        await this.#sink.insert(batch.records);
        this.#current = undefined;
        this.#written += batch.records.length;
        const onWritten = this.#onWritten;
        if (onWritten) quietly(() => onWritten(batch.records));
      } catch (error) {
        quietly(() => this.#onError(error));
        batch.attempts += 1;
        batch.failingSince ??= this.#now();
        if (
          batch.attempts >= this.#maxAttempts ||
          this.#now() - batch.failingSince >= this.#retryForMs ||
          (this.#closed && batch.attempts >= CLOSING_ATTEMPTS)
        ) {
          this.#current = undefined;
          this.#drop('write_failed', batch.records.length);
        }
        // The next interval (or flush's delay) tries again: a failing sink is not hammered.
        return;
      }
    }
  }

  /** The tally's changed rows, after the records (a failure is retried at the next interval). */
  async #writeDropped(): Promise<void> {
    const insertDropped = this.#sink.insertDropped?.bind(this.#sink);
    const rows = this.#tally?.pending() ?? [];
    if (!insertDropped || rows.length === 0) return;
    try {
      await insertDropped(rows);
      this.#tally?.written(rows);
    } catch (error) {
      quietly(() => this.#onError(error));
    }
  }

  /** Flagged ids, once the records before them are written (a failure is retried at the next interval). */
  async #writeFlagged(): Promise<void> {
    const flagGuardrails = this.#sink.flagGuardrails?.bind(this.#sink);
    if (!flagGuardrails || this.#flagged.length === 0) return;
    const ids = this.#flagged;
    this.#flagged = [];
    try {
      await flagGuardrails(ids);
    } catch (error) {
      quietly(() => this.#onError(error));
      if (this.#flagged.length + ids.length <= this.#maxBuffered) this.#flagged.unshift(...ids);
    }
  }

  #drop(reason: LogDropReason, count = 1): false {
    this.#dropped[reason] += count;
    this.#tally?.add(`log_${reason}`, count);
    const onDrop = this.#onDrop;
    if (onDrop) quietly(() => onDrop(reason, count));
    return false;
  }
}

/** Runs a caller's callback where a throw would break a promise made to never throw. */
function quietly(callback: () => void): void {
  try {
    callback();
  } catch {
    // The callback's own failure has nowhere better to go.
  }
}
