import { VectorPartition } from './vector-partition.ts';

/** What the index knows of an entry: enough to find it, not its answer. */
export interface IndexRecord {
  id: string;
  scope: string;
  hash: string;
  context?: string | undefined;
  createdAt: number;
  expiresAt: number;
  /** A unit vector (vector-math.ts `normalise`). */
  vector?: Float32Array | undefined;
}

export interface NearestQuery {
  scope: string;
  context: string;
  /** A unit vector. */
  vector: Float32Array;
  threshold: number;
}

export interface CacheIndexOptions {
  /** Most entries one scope holds; the oldest makes room for a new one. */
  maxEntriesPerScope: number;
  now: () => number;
}

interface ScopeIndex {
  /** By id, oldest first (insertion order): the first one is evicted. */
  entries: Map<string, IndexRecord>;
  /**
   * Where eviction goes on from: a live iterator of `entries` past the last entry evicted. Every entry before it
   * is gone (a new or replaced entry goes to the end), so it never skips one that is there. A new iterator from
   * the start would step over every entry deleted since V8 last compacted the Map (up to twice the bound): at a
   * full scope of 10,000 that made each store cost 9 µs instead of under 1.
   */
  oldest: MapIterator<IndexRecord>;
  byHash: Map<string, IndexRecord>;
  /** One per context: vectors are only ever compared within a context. */
  partitions: Map<string, VectorPartition<IndexRecord>>;
  /** When a full scope was last swept for expired entries (epoch ms). */
  sweptAt: number;
}

/**
 * A full scope is swept for expired entries (a pass over all of them) at most this often; in between, the
 * oldest entry makes room, so a store into a full scope costs O(1) and not a pass over 10 000 entries.
 */
const FULL_SWEEP_INTERVAL_MS = 1_000;

/**
 * The in-process directory of a cache: every entry by exact hash and by id (O(1), so a miss costs no round
 * trip), and the vectors by scope and context for the semantic search. Bounded per scope; expired entries are
 * skipped at once and dropped lazily or by `sweep`. The memory backend keeps answers beside it; the Redis
 * backend keeps one per replica, in sync through pub/sub.
 */
export class CacheIndex {
  private readonly scopes = new Map<string, ScopeIndex>();
  private readonly options: CacheIndexOptions;

  constructor(options: CacheIndexOptions) {
    this.options = options;
  }

  /**
   * Adds an entry, replacing the one of the same hash or id. Returns the entries that left the index for it:
   * the replaced one, expired ones, and the oldest ones evicted to stay within the bound.
   */
  add(added: IndexRecord): IndexRecord[] {
    const vector = added.vector;
    // The partition keeps its own copy of the vector; the record does not hold on to a second one.
    const record: IndexRecord = vector === undefined ? added : { ...added, vector: undefined };
    const scope = this.scopeOf(record.scope);
    const removed: IndexRecord[] = [];
    for (const previous of [scope.entries.get(record.id), scope.byHash.get(record.hash)]) {
      if (previous !== undefined && this.removeFrom(scope, previous)) removed.push(previous);
    }
    if (scope.entries.size >= this.options.maxEntriesPerScope) {
      const now = this.options.now();
      if (now - scope.sweptAt >= FULL_SWEEP_INTERVAL_MS) {
        scope.sweptAt = now;
        this.sweepScope(scope, removed);
      }
    }
    while (scope.entries.size >= this.options.maxEntriesPerScope) {
      let next = scope.oldest.next();
      if (next.done) {
        scope.oldest = scope.entries.values();
        next = scope.oldest.next();
      }
      if (next.done) break;
      this.removeFrom(scope, next.value);
      removed.push(next.value);
    }
    scope.entries.set(record.id, record);
    scope.byHash.set(record.hash, record);
    if (vector !== undefined && record.context !== undefined) {
      let partition = scope.partitions.get(record.context);
      if (partition !== undefined && partition.dimensions !== vector.length) {
        // An embedding of another length means another model under the same context: the old vectors
        // cannot be compared with new queries any more, so they give way.
        for (const stale of scope.entries.values()) {
          if (stale.context === record.context && stale.id !== record.id && this.removeFrom(scope, stale)) {
            removed.push(stale);
          }
        }
        partition = undefined;
      }
      if (partition === undefined) {
        partition = new VectorPartition(vector.length);
        scope.partitions.set(record.context, partition);
      }
      partition.add(record, vector);
    }
    return removed;
  }

  /** The live entry of the exact hash. */
  byHash(scope: string, hash: string): IndexRecord | undefined {
    return this.live(scope, this.scopes.get(scope)?.byHash.get(hash));
  }

  /** The live entry of the id. */
  byId(scope: string, id: string): IndexRecord | undefined {
    return this.live(scope, this.scopes.get(scope)?.entries.get(id));
  }

  /** The live entry of the scope and context nearest the query vector, at or above the threshold. */
  nearest(query: NearestQuery): { record: IndexRecord; similarity: number } | undefined {
    const partition = this.scopes.get(query.scope)?.partitions.get(query.context);
    if (partition === undefined || partition.dimensions !== query.vector.length) return undefined;
    const found = partition.nearest(query.vector, query.threshold, this.options.now());
    return found && { record: found.row, similarity: found.similarity };
  }

  /** Removes an entry by id; the removed record, if it was there. */
  remove(scope: string, id: string): IndexRecord | undefined {
    const index = this.scopes.get(scope);
    const record = index?.entries.get(id);
    if (index === undefined || record === undefined) return undefined;
    this.removeFrom(index, record);
    return record;
  }

  /** Removes every entry of a scope; the entries removed. */
  clearScope(scope: string): IndexRecord[] {
    const index = this.scopes.get(scope);
    this.scopes.delete(scope);
    return index === undefined ? [] : [...index.entries.values()];
  }

  /** Forgets everything (before a reload from the shared store). */
  clear(): void {
    this.scopes.clear();
  }

  /** Drops every expired entry; the entries dropped. */
  sweep(): IndexRecord[] {
    const removed: IndexRecord[] = [];
    for (const [name, scope] of this.scopes) {
      this.sweepScope(scope, removed);
      if (scope.entries.size === 0) this.scopes.delete(name);
    }
    return removed;
  }

  /** Entries of a scope, expired ones included until they are dropped. */
  size(scope: string): number {
    return this.scopes.get(scope)?.entries.size ?? 0;
  }

  private live(scope: string, record: IndexRecord | undefined): IndexRecord | undefined {
    if (record === undefined || record.expiresAt > this.options.now()) return record;
    this.remove(scope, record.id);
    return undefined;
  }

  private sweepScope(scope: ScopeIndex, removed: IndexRecord[]): void {
    const now = this.options.now();
    for (const record of scope.entries.values()) {
      if (record.expiresAt <= now && this.removeFrom(scope, record)) removed.push(record);
    }
  }

  private scopeOf(name: string): ScopeIndex {
    let scope = this.scopes.get(name);
    if (scope === undefined) {
      const entries = new Map<string, IndexRecord>();
      scope = {
        entries,
        oldest: entries.values(),
        byHash: new Map(),
        partitions: new Map(),
        sweptAt: Number.NEGATIVE_INFINITY,
      };
      this.scopes.set(name, scope);
    }
    return scope;
  }

  /** True when the record was in the scope. */
  private removeFrom(scope: ScopeIndex, record: IndexRecord): boolean {
    if (scope.entries.get(record.id) !== record) return false;
    scope.entries.delete(record.id);
    if (scope.byHash.get(record.hash) === record) scope.byHash.delete(record.hash);
    if (record.context !== undefined) {
      const partition = scope.partitions.get(record.context);
      if (partition?.remove(record.id) && partition.size === 0) scope.partitions.delete(record.context);
    }
    return true;
  }
}
