import type { CacheBackend, CacheBackendOptions, NearestQuery } from './cache-backend.ts';
import { DEFAULT_MAX_ENTRIES_PER_SCOPE, SWEEP_INTERVAL_MS } from './cache-backend.ts';
import type { CacheEntry } from './cache-entry.ts';
import { CacheIndex, type IndexRecord } from './cache-index.ts';

/**
 * The embedded-mode backend: entries in process memory, beside the index that finds them. Nothing is
 * persisted: a cache is worth little after a restart, and its entries expire in minutes.
 */
export class MemoryCacheBackend implements CacheBackend {
  private readonly index: CacheIndex;
  /** Entries by `<scope>\n<id>`. */
  private readonly entries = new Map<string, CacheEntry>();
  private readonly sweeper: NodeJS.Timeout;
  private readonly now: () => number;

  constructor(options: CacheBackendOptions = {}) {
    this.now = options.now ?? Date.now;
    this.index = new CacheIndex({
      now: this.now,
      maxEntriesPerScope: options.maxEntriesPerScope ?? DEFAULT_MAX_ENTRIES_PER_SCOPE,
    });
    this.sweeper = setInterval(() => this.forget(this.index.sweep()), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  async getByHash(scope: string, hash: string): Promise<CacheEntry | undefined> {
    return this.entryOf(this.index.byHash(scope, hash));
  }

  async nearest(query: NearestQuery): Promise<{ entry: CacheEntry; similarity: number } | undefined> {
    const found = this.index.nearest(query);
    const entry = this.entryOf(found?.record);
    return entry && found && { entry, similarity: found.similarity };
  }

  async put(entry: CacheEntry): Promise<void> {
    this.forget(this.index.add(entry));
    // The index holds the vector; a second copy here would double the memory a scope takes.
    this.entries.set(entryKey(entry.scope, entry.id), { ...entry, vector: undefined });
  }

  async deleteEntry(scope: string, id: string): Promise<boolean> {
    const removed = this.index.remove(scope, id);
    if (removed) this.forget([removed]);
    return removed !== undefined;
  }

  async deleteByHash(scope: string, hash: string): Promise<boolean> {
    const record = this.index.byHash(scope, hash);
    return record !== undefined && this.deleteEntry(scope, record.id);
  }

  async clearScope(scope: string): Promise<number> {
    const removed = this.index.clearScope(scope);
    this.forget(removed);
    // Entries that expired but were not swept yet are gone already: they are not counted.
    const now = this.now();
    return removed.filter((record) => record.expiresAt > now).length;
  }

  /** Closes it as a resource of a composition root (its AsyncDisposableStack). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    this.index.clear();
    this.entries.clear();
  }

  private entryOf(record: IndexRecord | undefined): CacheEntry | undefined {
    return record && this.entries.get(entryKey(record.scope, record.id));
  }

  private forget(records: readonly IndexRecord[]): void {
    for (const record of records) this.entries.delete(entryKey(record.scope, record.id));
  }
}

function entryKey(scope: string, id: string): string {
  return `${scope}\n${id}`;
}
