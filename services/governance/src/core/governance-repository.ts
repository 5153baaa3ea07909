import { type Logger, notFound } from '@gw/shared';
import {
  type ChangeFollower,
  defineCollection,
  followChanges,
  logInvalidDocuments,
  type Store,
  type Collection as StoreCollection,
} from '@gw/shared/store';
import { z } from 'zod';
import type { ResourceView } from './governance-messages.ts';
import {
  COLLECTIONS,
  type Collection,
  isVirtualKey,
  type Stored,
  type StoredOf,
  type StoredVirtualKey,
  storedSchemas,
} from './resources.ts';
import { hashVirtualKey } from './virtual-key-hash.ts';

const CHANGED_CHANNEL = 'governance.changed';
const HASH_INDEX = 'gov:virtual-key-hashes';

/** One collection in memory, and the store's collection every resource of it is read from. */
interface Table<Resource> {
  documents: StoreCollection<Resource>;
  resources: Map<string, Resource>;
}

type Tables = { [C in Collection]: Table<StoredOf<C>> };

/** What a replica announces after a write: the collection and id to read again. */
const changeSchema = z.tuple([z.enum(COLLECTIONS), z.string().min(1)]);

function parseChange(message: string): z.infer<typeof changeSchema> | undefined {
  try {
    return changeSchema.parse(JSON.parse(message));
  } catch {
    return undefined;
  }
}

const collectionKey = (collection: Collection) => `gov:${collection}`;
/** Bounds the value → hash memo (cleared when full: a flood of invalid keys cannot grow it). */
const MAX_REMEMBERED_HASHES = 10_000;

/**
 * Governance resources: the store is the truth, every replica keeps all of them in memory (authorize reads
 * no document on the hot path) and reloads one when another replica announces a change.
 */
export class GovernanceRepository {
  private readonly store: Store;
  private readonly logger: Logger;
  private readonly tables: Tables;
  private readonly byHash = new Map<string, StoredVirtualKey>();
  /** The gateway's model aliases as one list, made again after a change to them. */
  private aliasList: ReadonlyArray<StoredOf<'model-aliases'>> | undefined;
  /** The routing rules as one list, made again after a change to one (the rule set recompiles from it). */
  private ruleList: ReadonlyArray<StoredOf<'routing-rules'>> | undefined;
  private readonly hashes = new Map<string, string>();
  private follower: ChangeFollower | undefined;

  constructor(options: { store: Store; logger: Logger }) {
    this.store = options.store;
    this.logger = options.logger;
    const invalid = logInvalidDocuments(options.logger);
    const table = <Resource>(collection: Collection, schema: z.ZodType<Resource>): Table<Resource> => ({
      documents: defineCollection(options.store, collectionKey(collection), schema, { invalid }),
      resources: new Map(),
    });
    this.tables = {
      'virtual-keys': table('virtual-keys', storedSchemas['virtual-keys']),
      customers: table('customers', storedSchemas.customers),
      teams: table('teams', storedSchemas.teams),
      users: table('users', storedSchemas.users),
      'business-units': table('business-units', storedSchemas['business-units']),
      'model-aliases': table('model-aliases', storedSchemas['model-aliases']),
      'routing-rules': table('routing-rules', storedSchemas['routing-rules']),
    };
  }

  /**
   * Follows changes (a missed notice or a store that lost its data is caught within RESYNC_INTERVAL_MS;
   * `reseed` writes the config file's resources again then), and loads every resource.
   */
  async start(options: { reseed?: () => Promise<void> } = {}): Promise<void> {
    this.follower = await followChanges({
      store: this.store,
      channel: CHANGED_CHANNEL,
      logger: this.logger,
      onMessage: (message) => {
        const change = parseChange(message);
        if (!change) {
          this.logger.error({ channel: CHANGED_CHANNEL }, 'governance change message is invalid; ignored');
          return;
        }
        this.reload(...change).catch((error) =>
          this.logger.error({ err: error }, 'governance reload failed'),
        );
      },
      resync: () => this.resync(),
      ...(options.reseed && { reseed: options.reseed }),
    });
    await this.resync();
  }

  async close(): Promise<void> {
    await this.follower?.close();
  }

  /**
   * After the store lost its data (a Redis restarted without persistence): writes back every resource this
   * replica still holds in memory that the store no longer does, with its key's hash, so the keys, teams and
   * rules made through the admin API keep working instead of answering 401. Every replica does the same with
   * what it holds (the same resources, as of the last change it heard). Answers how many it wrote.
   */
  async restore(): Promise<number> {
    let restored = 0;
    for (const collection of COLLECTIONS) {
      const { documents, resources } = this.tables[collection];
      const held = new Set((await documents.list()).map(({ id }) => id));
      for (const [id, resource] of resources) {
        if (held.has(id)) continue;
        if (isVirtualKey(resource)) await this.store.put(HASH_INDEX, resource.value_hash, id);
        await this.store.put(collectionKey(collection), id, resource);
        restored += 1;
      }
    }
    return restored;
  }

  /** Reads every resource again: what the store no longer holds is forgotten, the rest replaced. */
  private async resync(): Promise<void> {
    for (const collection of COLLECTIONS) await this.resyncCollection(collection);
  }

  private async resyncCollection(collection: Collection): Promise<void> {
    const { documents, resources } = this.tables[collection];
    const stored = await documents.list();
    const ids = new Set(stored.map(({ id }) => id));
    for (const id of resources.keys()) {
      if (!ids.has(id)) this.apply(collection, id, undefined);
    }
    for (const { id, value } of stored) this.apply(collection, id, value);
  }

  get<C extends Collection>(collection: C, id: string | undefined): StoredOf<C> | undefined {
    return id === undefined ? undefined : this.tables[collection].resources.get(id);
  }

  list<C extends Collection>(collection: C): Array<StoredOf<C>> {
    return [...this.tables[collection].resources.values()];
  }

  /** The gateway's model aliases (authorize reads them on every request: no copy per call). */
  modelAliases(): ReadonlyArray<StoredOf<'model-aliases'>> {
    this.aliasList ??= this.list('model-aliases');
    return this.aliasList;
  }

  /** The routing rules (authorize reads them on every request: the same list until one changes). */
  routingRules(): ReadonlyArray<StoredOf<'routing-rules'>> {
    this.ruleList ??= this.list('routing-rules');
    return this.ruleList;
  }

  /** The key with this value; a key created a moment ago on another replica is read from the store. */
  async findVirtualKey(value: string): Promise<StoredVirtualKey | undefined> {
    // The hash of a value never changes; remembering it spares a SHA-256 per request.
    let hash = this.hashes.get(value);
    if (hash === undefined) {
      hash = hashVirtualKey(value);
      if (this.hashes.size >= MAX_REMEMBERED_HASHES) this.hashes.clear();
      this.hashes.set(value, hash);
    }
    const cached = this.byHash.get(hash);
    if (cached) return cached;
    const id = await this.store.get(HASH_INDEX, hash);
    if (typeof id !== 'string') return undefined;
    await this.reload('virtual-keys', id);
    return this.byHash.get(hash);
  }

  /** Reads a resource back from the store through its collection's schema (what fails it is ignored). */
  private async reload(collection: Collection, id: string): Promise<void> {
    this.apply(collection, id, await this.tables[collection].documents.get(id));
  }

  /** Replaces (or, with undefined, forgets) a resource in memory with what the store holds. */
  private apply<C extends Collection>(collection: C, id: string, resource: StoredOf<C> | undefined): void {
    const { resources } = this.tables[collection];
    if (collection === 'model-aliases') this.aliasList = undefined;
    if (collection === 'routing-rules') this.ruleList = undefined;
    const previous = resources.get(id);
    if (previous && isVirtualKey(previous)) this.byHash.delete(previous.value_hash);
    if (resource === undefined) {
      resources.delete(id);
      return;
    }
    resources.set(id, resource);
    if (isVirtualKey(resource)) this.byHash.set(resource.value_hash, resource);
  }

  /**
   * Stores a whole resource, then reads it back and announces it to every replica. A key's value hash is
   * indexed first, so a key is never stored without the index that finds it.
   */
  async save(collection: Collection, resource: Stored): Promise<void> {
    if (isVirtualKey(resource)) await this.store.put(HASH_INDEX, resource.value_hash, resource.id);
    await this.store.put(collectionKey(collection), resource.id, resource);
    await this.reload(collection, resource.id);
    await this.store.publish(CHANGED_CHANNEL, JSON.stringify([collection, resource.id]));
  }

  /** Deletes a resource (and a key's hash index entry) on every replica. */
  async remove(collection: Collection, resource: Stored): Promise<void> {
    if (isVirtualKey(resource)) await this.forgetKeyHash(resource.value_hash);
    await this.store.delete(collectionKey(collection), resource.id);
    await this.reload(collection, resource.id);
    await this.store.publish(CHANGED_CHANNEL, JSON.stringify([collection, resource.id]));
  }

  /** A key's value stops finding it (rotation). */
  async forgetKeyHash(hash: string): Promise<void> {
    await this.store.delete(HASH_INDEX, hash);
  }

  /**
   * The resource as the store holds it now: a write on another replica may not have reached this replica's
   * memory yet, and an update or a delete starts from what is there.
   */
  async current<C extends Collection>(collection: C, id: string): Promise<StoredOf<C>> {
    const resource = await this.stored(collection, id);
    if (!resource) throw notFound(`${collection} '${id}'`);
    return resource;
  }

  /** The resource as the store holds it now, or undefined when it holds none (this replica's memory follows). */
  async stored<C extends Collection>(collection: C, id: string): Promise<StoredOf<C> | undefined> {
    await this.reload(collection, id);
    return this.get(collection, id);
  }

  /** Whether a resource exists, asking the store when this replica has not seen it (made a moment ago). */
  async exists(collection: Collection, id: string): Promise<boolean> {
    if (this.get(collection, id)) return true;
    await this.reload(collection, id);
    return this.get(collection, id) !== undefined;
  }

  /** Every resource of a collection as the store holds it now (a reference check must not miss a new one). */
  async listCurrent<C extends Collection>(collection: C): Promise<Array<StoredOf<C>>> {
    await this.resyncCollection(collection);
    return this.list(collection);
  }

  /** A resource as the API shows it: never the key's hash. */
  view(resource: Stored): ResourceView {
    if (!isVirtualKey(resource)) return { ...resource };
    const { value_hash: _hash, ...visible } = resource;
    return visible;
  }
}
