import type { Cluster, Redis } from 'ioredis';
import { z } from 'zod';
import type { LogRecord } from '../requests/log-record.ts';
import type { LogTail } from '../requests/log-tail.ts';
import { decodeEntry, logStreamKey, streamEntrySchema } from './log-stream-entry.ts';

export interface RedisLogTailOptions {
  /** A connection of its own (XREAD BLOCK holds it), without a command timeout shorter than blockMs. */
  redis: Redis | Cluster;
  prefix: string;
  /** Longest one read waits; bounds how long close() takes. 1,000 ms by default. */
  blockMs?: number;
  onError?: (error: unknown) => void;
}

const readReplySchema = z.array(z.tuple([z.string(), z.array(streamEntrySchema)])).nullable();

/**
 * The cluster's live tail: reads the log stream with plain XREAD from its end (never the log workers' consumer
 * group, so it takes nothing from them), while anyone subscribes. Entries arrive as ingress replicas append
 * their batches.
 */
export class RedisLogTail implements LogTail {
  readonly #redis: Redis | Cluster;
  readonly #key: string;
  readonly #blockMs: number;
  readonly #onError: (error: unknown) => void;
  readonly #listeners = new Set<(records: readonly LogRecord[]) => void>();
  #running: Promise<void> | undefined;
  #closed = false;

  constructor(options: RedisLogTailOptions) {
    this.#redis = options.redis;
    this.#key = logStreamKey(options.prefix);
    this.#blockMs = options.blockMs ?? 1_000;
    this.#onError = options.onError ?? ((error) => process.emitWarning(String(error)));
  }

  subscribe(listener: (records: readonly LogRecord[]) => void): () => void {
    this.#listeners.add(listener);
    this.#running ??= this.#run().finally(() => {
      this.#running = undefined;
    });
    return () => this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#running;
  }

  async #run(): Promise<void> {
    let last = '$';
    while (!this.#closed && this.#listeners.size > 0) {
      try {
        const reply = await this.#redis.call(
          'XREAD',
          ...['COUNT', 100, 'BLOCK', this.#blockMs, 'STREAMS', this.#key, last],
        );
        for (const entry of readReplySchema.parse(reply)?.[0]?.[1] ?? []) {
          last = entry[0];
          const { records } = decodeEntry(entry);
          if (records.length === 0) continue;
          for (const listener of this.#listeners) listener(records);
        }
      } catch (error) {
        if (this.#closed) return;
        this.#onError(error);
        await new Promise((resolve) => setTimeout(resolve, this.#blockMs));
      }
    }
  }
}
