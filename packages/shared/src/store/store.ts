/**
 * The one state interface of gw. Two implementations pass one contract suite
 * (packages/testkit/src/store-contract.ts): MemoryStore (embedded mode, persisted to a data directory) and
 * RedisStore (cluster mode). Atomic operations are plain synchronous code in memory and Lua scripts on Redis.
 *
 * Values are JSON documents; callers validate what they read back with zod.
 */
export interface Store {
  /** A document of a collection, or undefined. */
  get(collection: string, id: string): Promise<unknown>;
  /** Every document of a collection, in no particular order. */
  list(collection: string): Promise<Array<{ id: string; value: unknown }>>;
  put(collection: string, id: string, value: unknown): Promise<void>;
  /** True when the document existed. */
  delete(collection: string, id: string): Promise<boolean>;

  /**
   * Atomic fixed-window counter. The window containing `nowMs` is `[floor(nowMs / windowMs) * windowMs, +windowMs)`.
   * Adds `amount` only if the count after adding stays within `limit`; answers the count after the call and
   * when the window ends. An `amount` of 0 only reads.
   */
  consumeWindow(request: WindowRequest): Promise<WindowResult>;

  /** Publishes to every subscriber of the channel, in this process and (Redis) in every other one. */
  publish(channel: string, message: string): Promise<void>;
  /** Subscribes; the returned function unsubscribes. */
  subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>>;

  /** Writes pending state (memory: the data directory) and releases connections. */
  close(): Promise<void>;
}

export interface WindowRequest {
  key: string;
  amount: number;
  limit: number;
  windowMs: number;
  nowMs: number;
}

export interface WindowResult {
  allowed: boolean;
  /** Count in the window after this call. */
  count: number;
  /** Epoch milliseconds at which the window ends. */
  resetAtMs: number;
}
