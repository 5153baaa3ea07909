import type { CacheEntry } from './cache-entry.ts';
import type { NearestQuery } from './cache-index.ts';

export type { NearestQuery } from './cache-index.ts';

/**
 * Where entries live. Two implementations pass one contract suite (packages/testkit/src/cache-contract.ts):
 * MemoryCacheBackend (embedded mode) and RedisCacheBackend (`@gw/cache/redis`, cluster mode, shared by every
 * replica). Both answer misses from an in-process index, so a miss costs no round trip; an entry whose
 * `expiresAt` has passed (by the backend's clock) is never returned.
 */
export interface CacheBackend {
  /** The live entry of a scope with this exact hash, in O(1). */
  getByHash(scope: string, hash: string): Promise<CacheEntry | undefined>;
  /** The live entry of the scope and context whose vector is nearest the query, at or above the threshold. */
  nearest(query: NearestQuery): Promise<{ entry: CacheEntry; similarity: number } | undefined>;
  /**
   * Stores an entry (its vector, if any, normalised), replacing the scope's entry of the same hash; the oldest
   * entries of a full scope make room.
   */
  put(entry: CacheEntry): Promise<void>;
  /** True when the entry existed. */
  deleteEntry(scope: string, id: string): Promise<boolean>;
  /** True when an entry had the hash. */
  deleteByHash(scope: string, hash: string): Promise<boolean>;
  /** Removes every entry of a scope; how many there were. */
  clearScope(scope: string): Promise<number>;
  close(): Promise<void>;
}

/** What every backend is made with. */
export interface CacheBackendOptions {
  /** Epoch ms; injectable so expiry is testable without waiting. */
  now?: () => number;
  /** Most entries one scope holds (10 000 by default); the oldest makes room. */
  maxEntriesPerScope?: number;
}

export const DEFAULT_MAX_ENTRIES_PER_SCOPE = 10_000;

/** How often expired entries are dropped from an in-process index (lookups skip them anyway). */
export const SWEEP_INTERVAL_MS = 30_000;
