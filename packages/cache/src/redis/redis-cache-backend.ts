import { randomUUID } from 'node:crypto';
import type { RedisConnection } from '@gw/shared/store';
import { z } from 'zod';
import type { CacheBackend, CacheBackendOptions, NearestQuery } from '../cache-backend.ts';
import { DEFAULT_MAX_ENTRIES_PER_SCOPE, SWEEP_INTERVAL_MS } from '../cache-backend.ts';
import { type CacheEntry, decodeEntry, encodeEntry } from '../cache-entry.ts';
import { CacheIndex, type IndexRecord } from '../cache-index.ts';
import { closeConnection, openCacheConnections, type ScriptedRedis } from './cache-connections.ts';
import { putMessage, recordOf, type SyncMessage, syncMessageSchema } from './cache-sync.ts';
import { type CacheKeyLayout, cacheKeyLayout } from './redis-key-layout.ts';

export interface RedisCacheBackendOptions extends CacheBackendOptions {
  url: string;
  /** Put before every key and the channel (`gw:` in production, a unique one per test run). */
  prefix: string;
  /** Most time one command may take; 500 ms by default (a lookup that waits longer is worth less than a miss). */
  commandTimeoutMs?: number;
  /** Told of failures no caller sees: a lost connection, a corrupt entry, a bad notice. Warnings by default. */
  onError?: (error: unknown) => void;
  /**
   * False for a process that only deletes (the admin API): no index is filled or kept in sync, so lookups
   * miss; deletes and clears still reach every other replica's index. True by default.
   */
  followChanges?: boolean;
}

/** Entries read per MGET when the index is filled. */
const FILL_BATCH = 200;

const removedSchema = z.array(z.string());
const deletedSchema = z.tuple([z.number(), z.array(z.string())]);

/**
 * The cluster-mode backend. Entries are Redis keys with a PX TTL, `<prefix>cache:{<scope>}:h:<hash>` (one per
 * scope and hash), each scope with its index sets (`…:ids` id → hash, `…:order` ids by age) in its own hash
 * slot; `<prefix>cache:scopes` names the scopes. Each replica keeps a CacheIndex in process, filled from Redis
 * at start and after every reconnect of its subscriber, and kept in sync through notices on
 * `<prefix>cache:changes`: a miss costs no round trip, a hit one GET, and an entry written by any replica is
 * found by all.
 */
export class RedisCacheBackend implements CacheBackend {
  private readonly connection: ScriptedRedis;
  private readonly subscriber: RedisConnection;
  private readonly keys: CacheKeyLayout;
  private index: CacheIndex;
  /** While a fill runs: the changes made meanwhile, applied again to the index it builds. */
  private changesDuringFill: Array<(index: CacheIndex) => void> | undefined;
  private filling: Promise<void> | undefined;
  private fillAgain = false;
  private readonly origin = randomUUID();
  private readonly now: () => number;
  private readonly maxEntriesPerScope: number;
  private readonly reportError: (error: unknown) => void;
  private readonly sweeper: NodeJS.Timeout;
  private closing: Promise<void> | undefined;

  private constructor(
    connection: ScriptedRedis,
    subscriber: RedisConnection,
    options: RedisCacheBackendOptions,
  ) {
    this.connection = connection;
    this.subscriber = subscriber;
    this.keys = cacheKeyLayout(options.prefix);
    this.now = options.now ?? Date.now;
    this.maxEntriesPerScope = options.maxEntriesPerScope ?? DEFAULT_MAX_ENTRIES_PER_SCOPE;
    this.index = new CacheIndex({ now: this.now, maxEntriesPerScope: this.maxEntriesPerScope });
    this.reportError = options.onError ?? warn;
    this.sweeper = setInterval(() => this.index.sweep(), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
  }

  /** Connects, subscribes to the notices and fills the index; rejects when Redis cannot be reached. */
  static async connect(options: RedisCacheBackendOptions): Promise<RedisCacheBackend> {
    const { commands: connection, subscriber } = await openCacheConnections({
      ...options,
      onError: options.onError ?? warn,
    });
    const backend = new RedisCacheBackend(connection, subscriber, options);
    if (options.followChanges === false) return backend;
    subscriber.on('message', (_channel: string, text: string) => backend.apply(text));
    await subscriber.subscribe(backend.keys.channel);
    // Notices lost while the subscriber was away are made up for by reading everything again.
    subscriber.on('ready', () => void backend.fill().catch((error: unknown) => backend.reportError(error)));
    await backend.fill();
    return backend;
  }

  async getByHash(scope: string, hash: string): Promise<CacheEntry | undefined> {
    const record = this.index.byHash(scope, hash);
    return record && this.read(record);
  }

  async nearest(query: NearestQuery): Promise<{ entry: CacheEntry; similarity: number } | undefined> {
    const found = this.index.nearest(query);
    const entry = found && (await this.read(found.record));
    return entry && found && { entry, similarity: found.similarity };
  }

  async put(entry: CacheEntry): Promise<void> {
    const ttlMs = entry.expiresAt - this.now();
    if (ttlMs <= 0) return;
    const keys = this.keys.scope(entry.scope);
    const reply = await this.connection.putEntry(
      3,
      keys.entry(entry.hash),
      keys.ids,
      keys.order,
      entry.id,
      entry.hash,
      encodeEntry(entry),
      String(Math.ceil(ttlMs)),
      String(entry.createdAt),
      String(this.maxEntriesPerScope),
      keys.entryPrefix,
    );
    const removed = removedSchema.parse(reply);
    const record = recordOf(entry);
    this.change((index) => {
      for (const id of removed) index.remove(entry.scope, id);
      index.add(record);
    });
    await Promise.all([
      this.connection.sadd(this.keys.scopes, keys.tag),
      this.connection.publish(this.keys.channel, putMessage(this.origin, entry, removed)),
    ]);
  }

  async deleteEntry(scope: string, id: string): Promise<boolean> {
    return (await this.deleteIds(scope, [id])) > 0;
  }

  async deleteByHash(scope: string, hash: string): Promise<boolean> {
    const text = await this.connection.get(this.keys.scope(scope).entry(hash));
    const entry = text === null ? undefined : this.decode(text);
    return entry !== undefined && this.deleteEntry(scope, entry.id);
  }

  async clearScope(scope: string): Promise<number> {
    const count = await this.deleteIds(scope, []);
    this.change((index) => index.clearScope(scope));
    await this.connection.publish(
      this.keys.channel,
      JSON.stringify({ op: 'clear', origin: this.origin, scope }),
    );
    return count;
  }

  /** Closes it as a resource of a composition root (its AsyncDisposableStack). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      clearInterval(this.sweeper);
      this.index.clear();
      await Promise.all([closeConnection(this.connection), closeConnection(this.subscriber)]);
    })();
    return this.closing;
  }

  /** Deletes ids of a scope (every one when none is given); how many live entries went. */
  private async deleteIds(scope: string, ids: string[]): Promise<number> {
    const keys = this.keys.scope(scope);
    const reply = await this.connection.deleteEntries(2, keys.ids, keys.order, keys.entryPrefix, ...ids);
    const [live, deleted] = deletedSchema.parse(reply);
    this.change((index) => {
      for (const id of [...ids, ...deleted]) index.remove(scope, id);
    });
    if (ids.length > 0) {
      await this.connection.publish(
        this.keys.channel,
        JSON.stringify({ op: 'delete', origin: this.origin, scope, ids }),
      );
    }
    return live;
  }

  /** The entry a record points to, read from Redis; a record whose entry is gone leaves the index. */
  private async read(record: IndexRecord): Promise<CacheEntry | undefined> {
    const text = await this.connection.get(this.keys.scope(record.scope).entry(record.hash));
    const entry = text === null ? undefined : this.decode(text);
    // Another replica may have replaced the entry of this hash: that one answers the same request.
    if (entry === undefined || entry.scope !== record.scope || entry.hash !== record.hash) {
      this.change((index) => index.remove(record.scope, record.id));
      return undefined;
    }
    return entry.expiresAt > this.now() ? entry : undefined;
  }

  private decode(text: string): CacheEntry | undefined {
    try {
      return decodeEntry(text);
    } catch (error) {
      this.reportError(new Error('A corrupt cache entry in Redis was ignored', { cause: error }));
      return undefined;
    }
  }

  /** Applies another replica's notice to the index. */
  private apply(text: string): void {
    let message: SyncMessage;
    try {
      message = syncMessageSchema.parse(JSON.parse(text));
    } catch (error) {
      this.reportError(new Error(`A malformed notice on ${this.keys.channel} was ignored`, { cause: error }));
      return;
    }
    if (message.origin === this.origin) return;
    this.change((index) => {
      if (message.op === 'clear') {
        index.clearScope(message.scope);
        return;
      }
      const scope = message.op === 'put' ? message.record.scope : message.scope;
      for (const id of message.op === 'put' ? message.removed : message.ids) index.remove(scope, id);
      if (message.op === 'put') index.add(message.record);
    });
  }

  /** Applies a change to the index, and again to the one a running fill builds (it may have read too early). */
  private change(apply: (index: CacheIndex) => void): void {
    apply(this.index);
    this.changesDuringFill?.push(apply);
  }

  /** Reads every scope's entries into a fresh index (at start, and after the subscriber reconnects). */
  private fill(): Promise<void> {
    if (this.filling !== undefined) {
      // A fill that started before this call may have read before what the call is meant to catch.
      this.fillAgain = true;
      return this.filling;
    }
    this.filling = (async () => {
      do {
        this.fillAgain = false;
        await this.fillOnce();
      } while (this.fillAgain);
    })().finally(() => {
      this.filling = undefined;
    });
    return this.filling;
  }

  private async fillOnce(): Promise<void> {
    this.changesDuringFill = [];
    try {
      const fresh = new CacheIndex({ now: this.now, maxEntriesPerScope: this.maxEntriesPerScope });
      for (const record of await this.readAllRecords()) fresh.add(record);
      for (const apply of this.changesDuringFill) apply(fresh);
      this.index = fresh;
    } finally {
      this.changesDuringFill = undefined;
    }
  }

  /** Every live entry's index record, oldest first. */
  private async readAllRecords(): Promise<IndexRecord[]> {
    const records: IndexRecord[] = [];
    for (const tag of await this.connection.smembers(this.keys.scopes)) {
      const keys = this.keys.scopeOfTag(tag);
      const hashes = Object.values(await this.connection.hgetall(keys.ids));
      if (hashes.length === 0) {
        await this.connection.srem(this.keys.scopes, tag);
        continue;
      }
      for (let start = 0; start < hashes.length; start += FILL_BATCH) {
        const batch = hashes.slice(start, start + FILL_BATCH).map((hash) => keys.entry(hash));
        for (const text of await this.connection.mget(...batch)) {
          const entry = text === null ? undefined : this.decode(text);
          if (entry !== undefined && entry.expiresAt > this.now()) records.push(recordOf(entry));
        }
      }
    }
    return records.sort((left, right) => left.createdAt - right.createdAt);
  }
}

function warn(error: unknown): void {
  process.emitWarning(error instanceof Error ? error : new Error(String(error)));
}
