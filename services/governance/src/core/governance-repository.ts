import { type Budget, GatewayError, type Logger, newId, newVirtualKeyValue, notFound } from '@gw/shared';
import { type ChangeFollower, followChanges, type Store } from '@gw/shared/store';
import { z } from 'zod';
import type { ResourceView } from './governance-messages.ts';
import {
  COLLECTIONS,
  type Collection,
  ID_PREFIX,
  inputSchemas,
  isVirtualKey,
  normalizeBudgets,
  normalizeProviderConfigs,
  type Stored,
  type StoredOf,
  type StoredVirtualKey,
  storedSchemas,
  storedVirtualKeySchema,
} from './resources.ts';
import { hashVirtualKey } from './virtual-key-hash.ts';

const CHANGED_CHANNEL = 'governance.changed';
const HASH_INDEX = 'gov:virtual-key-hashes';

type ResourceInput = z.infer<(typeof inputSchemas)[Collection]>;
type BudgetInput = { budget?: Budget | undefined; budgets?: Budget[] | undefined };

/** One collection in memory, with the schema that parsed every resource of it read from the store. */
interface Table<Resource> {
  schema: z.ZodType<Resource>;
  resources: Map<string, Resource>;
}

type Tables = { [C in Collection]: Table<StoredOf<C>> };

function table<Resource>(schema: z.ZodType<Resource>): Table<Resource> {
  return { schema, resources: new Map() };
}

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

function invalid(message: string, param?: string): GatewayError {
  return new GatewayError({ type: 'invalid_request', message, param: param ?? null });
}

function missing(collection: Collection, id: string): GatewayError {
  return notFound(`${collection} '${id}'`);
}

function hint(value: string): string {
  return `sk-gw-…${value.slice(-4)}`;
}

/**
 * Governance resources: the store is the truth, every replica keeps all of them in memory (authorize reads
 * no document on the hot path) and reloads one when another replica announces a change.
 */
export class GovernanceRepository {
  private readonly store: Store;
  private readonly logger: Logger;
  private readonly tables: Tables = {
    'virtual-keys': table(storedSchemas['virtual-keys']),
    customers: table(storedSchemas.customers),
    teams: table(storedSchemas.teams),
    users: table(storedSchemas.users),
    'business-units': table(storedSchemas['business-units']),
    'model-aliases': table(storedSchemas['model-aliases']),
  };
  private readonly byHash = new Map<string, StoredVirtualKey>();
  /** The gateway's model aliases as one list, made again after a change to them. */
  private aliasList: ReadonlyArray<StoredOf<'model-aliases'>> | undefined;
  private readonly hashes = new Map<string, string>();
  private follower: ChangeFollower | undefined;
  private readonly now: () => number;

  constructor(options: { store: Store; logger: Logger; now: () => number }) {
    this.store = options.store;
    this.logger = options.logger;
    this.now = options.now;
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

  /** Reads every resource again: what the store no longer holds is forgotten, the rest replaced. */
  private async resync(): Promise<void> {
    for (const collection of COLLECTIONS) {
      const stored = await this.store.list(collectionKey(collection));
      const ids = new Set(stored.map(({ id }) => id));
      for (const id of this.tables[collection].resources.keys()) {
        if (!ids.has(id)) this.apply(collection, id, undefined);
      }
      for (const { id, value } of stored) this.apply(collection, id, value);
    }
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
    this.apply(collection, id, await this.store.get(collectionKey(collection), id));
  }

  /** Replaces (or, with undefined, forgets) a resource in memory with what the store holds. */
  private apply<C extends Collection>(collection: C, id: string, value: unknown): void {
    const { schema, resources } = this.tables[collection];
    if (collection === 'model-aliases') this.aliasList = undefined;
    const previous = resources.get(id);
    if (previous && isVirtualKey(previous)) this.byHash.delete(previous.value_hash);
    if (value === undefined) {
      resources.delete(id);
      return;
    }
    const parsed = schema.safeParse(value);
    if (!parsed.success) {
      this.logger.error(
        { collection, id, issue: parsed.error.issues[0]?.message },
        'stored governance resource is invalid; ignored',
      );
      resources.delete(id);
      return;
    }
    resources.set(id, parsed.data);
    if (isVirtualKey(parsed.data)) this.byHash.set(parsed.data.value_hash, parsed.data);
  }

  private async write(collection: Collection, resource: Stored): Promise<void> {
    await this.store.put(collectionKey(collection), resource.id, resource);
    await this.reload(collection, resource.id);
    await this.store.publish(CHANGED_CHANNEL, JSON.stringify([collection, resource.id]));
  }

  private checkReferences(input: Record<string, unknown>): void {
    const references: Array<[string, Collection]> = [
      ['team_id', 'teams'],
      ['customer_id', 'customers'],
      ['user_id', 'users'],
      ['business_unit_id', 'business-units'],
    ];
    for (const [field, collection] of references) {
      const id = input[field];
      if (typeof id === 'string' && !this.get(collection, id))
        throw invalid(`${field}: ${collection} '${id}' does not exist`, field);
    }
  }

  private parseInput(collection: Collection, body: unknown): ResourceInput {
    const result = inputSchemas[collection].safeParse(body);
    if (!result.success) {
      const issue = result.error.issues[0]!;
      const path = issue.path.join('.');
      throw invalid(`${path ? `${path}: ` : ''}${issue.message}`, path || undefined);
    }
    return result.data;
  }

  /** Creates a resource; for a virtual key the answer carries its value, the only time it is shown. */
  async create(
    collection: Collection,
    body: unknown,
    options: { id?: string; value?: string } = {},
  ): Promise<ResourceView & { value?: string }> {
    const input = this.parseInput(collection, body);
    this.checkReferences(input);
    const id = options.id ?? newId(ID_PREFIX[collection]);
    if (this.get(collection, id))
      throw new GatewayError({
        type: 'conflict',
        message: `${collection} '${id}' already exists`,
      });
    const timestamp = new Date(this.now()).toISOString();
    const { budget, budgets, ...rest } = input as ResourceInput & BudgetInput;
    const base = {
      ...rest,
      id,
      ...(collection === 'model-aliases' ? {} : { budgets: normalizeBudgets({ budgets, budget }) }),
      created_at: timestamp,
      updated_at: timestamp,
    };
    if (collection !== 'virtual-keys') {
      const stored = storedSchemas[collection].parse(base);
      await this.write(collection, stored);
      return this.view(stored);
    }
    const value = options.value ?? newVirtualKeyValue();
    const key = storedVirtualKeySchema.parse({
      ...base,
      provider_configs: normalizeProviderConfigs(
        'provider_configs' in input ? input.provider_configs : [],
        [],
      ),
      value_hash: hashVirtualKey(value),
      value_hint: hint(value),
    });
    await this.store.put(HASH_INDEX, key.value_hash, id);
    await this.write(collection, key);
    return { ...this.view(key), value };
  }

  async update(collection: Collection, id: string, body: unknown): Promise<ResourceView> {
    const existing = this.get(collection, id);
    if (!existing) throw missing(collection, id);
    const input = this.parseInput(collection, body);
    this.checkReferences(input);
    const { budget, budgets, ...rest } = input as ResourceInput & BudgetInput;
    const updated = {
      ...rest,
      id,
      ...('budgets' in existing ? { budgets: normalizeBudgets({ budgets, budget }, existing.budgets) } : {}),
      created_at: existing.created_at,
      updated_at: new Date(this.now()).toISOString(),
    };
    const stored = isVirtualKey(existing)
      ? storedVirtualKeySchema.parse({
          ...updated,
          value_hash: existing.value_hash,
          value_hint: existing.value_hint,
          provider_configs: normalizeProviderConfigs(
            'provider_configs' in input ? input.provider_configs : [],
            existing.provider_configs,
          ),
        })
      : storedSchemas[collection].parse(updated);
    await this.write(collection, stored);
    return this.view(stored);
  }

  async delete(collection: Collection, id: string): Promise<void> {
    const existing = this.get(collection, id);
    if (!existing) throw missing(collection, id);
    if (isVirtualKey(existing)) await this.store.delete(HASH_INDEX, existing.value_hash);
    await this.store.delete(collectionKey(collection), id);
    await this.reload(collection, id);
    await this.store.publish(CHANGED_CHANNEL, JSON.stringify([collection, id]));
  }

  /** A new value for a key; the old one stops working at once on every replica. */
  async rotate(id: string): Promise<ResourceView & { value: string }> {
    const existing = this.get('virtual-keys', id);
    if (!existing) throw missing('virtual-keys', id);
    const value = newVirtualKeyValue();
    const rotated = {
      ...existing,
      value_hash: hashVirtualKey(value),
      value_hint: hint(value),
      updated_at: new Date(this.now()).toISOString(),
    };
    await this.store.put(HASH_INDEX, rotated.value_hash, id);
    await this.store.delete(HASH_INDEX, existing.value_hash);
    await this.write('virtual-keys', rotated);
    return { ...this.view(rotated), value };
  }

  /** A resource as the API shows it: never the key's hash. */
  view(resource: Stored): ResourceView {
    if (!isVirtualKey(resource)) return { ...resource };
    const { value_hash: _hash, ...visible } = resource;
    return visible;
  }
}
