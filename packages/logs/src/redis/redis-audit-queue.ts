import { setTimeout as sleep } from 'node:timers/promises';
import type { Cluster, Redis } from 'ioredis';
import { type AuditEventInput, auditEventSchema } from '../audit/audit-record.ts';
import type { QueuedAuditEvent } from '../postgres/postgres-audit-store.ts';

/** The stream of audit records on their way to PostgreSQL (audit.on_store_failure: queue). */
const auditQueueKey = (prefix: string): string => `${prefix}audit-queue`;

/** Each stream entry holds one event, as JSON, in this field. */
const EVENT_FIELD = 'event';

export interface RedisAuditQueueOptions {
  redis: Redis | Cluster;
  /** The deployment's key prefix (GW_REDIS_PREFIX). */
  prefix: string;
  /**
   * Most entries the stream holds (the bound on Redis memory while PostgreSQL is down): past it an append is
   * refused, so a change is refused, never an entry trimmed. 100,000 by default.
   */
  maxEntries?: number;
}

/**
 * The admin's side of the audit queue: appends an event (already redacted) to the stream. Nothing trims the
 * stream but the drain, after the entries are in PostgreSQL.
 */
export class RedisAuditQueue {
  readonly what = 'the audit queue in Redis';
  readonly #redis: Redis | Cluster;
  readonly #key: string;
  readonly #maxEntries: number;

  constructor(options: RedisAuditQueueOptions) {
    this.#redis = options.redis;
    this.#key = auditQueueKey(options.prefix);
    this.#maxEntries = options.maxEntries ?? 100_000;
  }

  async append(event: AuditEventInput): Promise<void> {
    // The bound is checked, then the entry appended: under a race the stream may pass it by a few entries.
    const length = await this.#redis.xlen(this.#key);
    if (length >= this.#maxEntries)
      throw new Error(
        `the audit queue holds ${length} records already (its bound) while PostgreSQL is behind`,
      );
    await this.#redis.xadd(this.#key, '*', EVENT_FIELD, JSON.stringify(event));
  }

  async ping(): Promise<void> {
    await this.#redis.ping();
  }
}

/** What the drain writes into: PostgresAuditStore. */
export interface QueuedAuditStore {
  appendQueued(queue: string, entries: readonly QueuedAuditEvent[]): Promise<number>;
}

export interface AuditQueueDrainOptions {
  redis: Redis | Cluster;
  prefix: string;
  store: QueuedAuditStore;
  /** Entries read and written at a time. 200 by default. */
  batch?: number;
  /** The wait between reads of an empty stream, and after a failure. 200 ms by default. */
  intervalMs?: number;
  /** Told of each failure (the store or Redis down): the entries stay, and are read again. */
  onError?: (error: unknown) => void;
  /** Told of each entry that could not be decoded (skipped). */
  onInvalid?: (id: string) => void;
}

function decode(fields: string[]): AuditEventInput | undefined {
  const index = fields.indexOf(EVENT_FIELD);
  if (index === -1 || index % 2 !== 0) return undefined;
  try {
    const parsed = auditEventSchema.safeParse(JSON.parse(fields[index + 1] ?? ''));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Moves the audit queue into PostgreSQL, oldest first, in every admin replica. Each batch is one transaction
 * under the chain's append lock that skips what another replica wrote already (the queue's cursor), so each
 * entry becomes exactly one record, in the stream's order; the entries are deleted from the stream after the
 * commit. A failure leaves them, to be read again after `intervalMs`.
 */
export function startAuditQueueDrain(
  options: AuditQueueDrainOptions,
): { close(): Promise<void> } & AsyncDisposable {
  const key = auditQueueKey(options.prefix);
  const batch = options.batch ?? 200;
  const intervalMs = options.intervalMs ?? 200;
  const stop = new AbortController();
  const pause = () => sleep(intervalMs, undefined, { signal: stop.signal }).catch(() => {});
  const loop = (async () => {
    while (!stop.signal.aborted) {
      // Not connected yet (start-up) or again (Redis down): nothing to read, and nothing worth logging.
      if (options.redis.status !== 'ready') {
        await pause();
        continue;
      }
      try {
        const entries = await options.redis.xrange(key, '-', '+', 'COUNT', batch);
        if (entries.length === 0) {
          await pause();
          continue;
        }
        const queued = entries.map(([id, fields]) => {
          const event = decode(fields);
          if (!event) options.onInvalid?.(id);
          return { id, event };
        });
        await options.store.appendQueued(key, queued);
        await options.redis.xdel(key, ...entries.map(([id]) => id));
      } catch (error) {
        options.onError?.(error);
        await pause();
      }
    }
  })();
  const close = async () => {
    stop.abort();
    await loop;
  };
  return { close, [Symbol.asyncDispose]: close };
}
