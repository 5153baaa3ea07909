import { GatewayError, type Logger, newId, newVirtualKeyValue, notFound } from '@gw/shared';
import type { Store } from '@gw/shared/store';
import {
  type Collection,
  ID_PREFIX,
  inputSchemas,
  normalizeBudgets,
  type StoredOwner,
  type StoredVirtualKey,
  storedSchemas,
} from './resources.ts';
import { hashVirtualKey } from './virtual-key-hash.ts';

const CHANGED_CHANNEL = 'governance.changed';
const HASH_INDEX = 'gov:virtual-key-hashes';

const collectionKey = (collection: Collection) => `gov:${collection}`;
/** Bounds the value → hash memo (cleared when full: a flood of invalid keys cannot grow it). */
const MAX_REMEMBERED_HASHES = 10_000;

type Stored = StoredVirtualKey | StoredOwner;

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
  private readonly cache = new Map<Collection, Map<string, Stored>>();
  private readonly byHash = new Map<string, StoredVirtualKey>();
  private readonly hashes = new Map<string, string>();
  private unsubscribe: (() => Promise<void>) | undefined;
  private readonly now: () => number;

  constructor(options: { store: Store; logger: Logger; now: () => number }) {
    this.store = options.store;
    this.logger = options.logger;
    this.now = options.now;
  }

  async start(): Promise<void> {
    for (const collection of Object.keys(storedSchemas) as Collection[]) {
      this.cache.set(collection, new Map());
      for (const { id } of await this.store.list(collectionKey(collection)))
        await this.reload(collection, id);
    }
    this.unsubscribe = await this.store.subscribe(CHANGED_CHANNEL, (message) => {
      const [collection, id] = JSON.parse(message) as [Collection, string];
      this.reload(collection, id).catch((error) =>
        this.logger.error({ err: error }, 'governance reload failed'),
      );
    });
  }

  async close(): Promise<void> {
    await this.unsubscribe?.();
  }

  get<T extends Stored>(collection: Collection, id: string | undefined): T | undefined {
    return id === undefined ? undefined : (this.cache.get(collection)?.get(id) as T | undefined);
  }

  list(collection: Collection): Stored[] {
    return [...(this.cache.get(collection)?.values() ?? [])];
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

  private async reload(collection: Collection, id: string): Promise<void> {
    const map = this.cache.get(collection);
    if (!map) return;
    const previous = map.get(id);
    if (previous && collection === 'virtual-keys')
      this.byHash.delete((previous as StoredVirtualKey).value_hash);
    const value = await this.store.get(collectionKey(collection), id);
    if (value === undefined) {
      map.delete(id);
      return;
    }
    const parsed = storedSchemas[collection].safeParse(value);
    if (!parsed.success) {
      this.logger.error(
        { collection, id, issue: parsed.error.issues[0]?.message },
        'stored governance resource is invalid; ignored',
      );
      map.delete(id);
      return;
    }
    map.set(id, parsed.data as Stored);
    if (collection === 'virtual-keys')
      this.byHash.set((parsed.data as StoredVirtualKey).value_hash, parsed.data as StoredVirtualKey);
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

  private parseInput(collection: Collection, body: unknown) {
    const result = inputSchemas[collection].safeParse(body);
    if (!result.success) {
      const issue = result.error.issues[0]!;
      const path = issue.path.join('.');
      throw invalid(`${path ? `${path}: ` : ''}${issue.message}`, path || undefined);
    }
    return result.data as Record<string, unknown> & { budgets?: never; budget?: never };
  }

  /** Creates a resource; for a virtual key the answer carries its value, the only time it is shown. */
  async create(
    collection: Collection,
    body: unknown,
    options: { id?: string; value?: string } = {},
  ): Promise<Record<string, unknown>> {
    const input = this.parseInput(collection, body);
    this.checkReferences(input);
    const id = options.id ?? newId(ID_PREFIX[collection]);
    if (this.get(collection, id))
      throw new GatewayError({
        type: 'conflict',
        message: `${collection} '${id}' already exists`,
      });
    const timestamp = new Date(this.now()).toISOString();
    const { budget, budgets, ...rest } = input as Record<string, unknown>;
    const base = {
      ...rest,
      id,
      budgets: normalizeBudgets({ budgets, budget } as never),
      created_at: timestamp,
      updated_at: timestamp,
    };
    if (collection !== 'virtual-keys') {
      await this.write(collection, base as unknown as StoredOwner);
      return this.view(collection, base as unknown as Stored);
    }
    const value = options.value ?? newVirtualKeyValue();
    const key = {
      ...base,
      provider_configs: normalizeProviderConfigs(rest['provider_configs'], []),
      value_hash: hashVirtualKey(value),
      value_hint: hint(value),
    } as unknown as StoredVirtualKey;
    await this.store.put(HASH_INDEX, key.value_hash, id);
    await this.write(collection, key);
    return { ...this.view(collection, key), value };
  }

  async update(collection: Collection, id: string, body: unknown): Promise<Record<string, unknown>> {
    const existing = this.get(collection, id);
    if (!existing) throw missing(collection, id);
    const input = this.parseInput(collection, body);
    this.checkReferences(input);
    const { budget, budgets, ...rest } = input as Record<string, unknown>;
    const updated = {
      ...rest,
      id,
      budgets: normalizeBudgets({ budgets, budget } as never, existing.budgets),
      created_at: (existing as { created_at: string }).created_at,
      updated_at: new Date(this.now()).toISOString(),
    } as Record<string, unknown>;
    if (collection === 'virtual-keys') {
      const key = existing as StoredVirtualKey;
      updated['value_hash'] = key.value_hash;
      updated['value_hint'] = key.value_hint;
      updated['provider_configs'] = normalizeProviderConfigs(rest['provider_configs'], key.provider_configs);
    }
    await this.write(collection, updated as unknown as Stored);
    return this.view(collection, updated as unknown as Stored);
  }

  async delete(collection: Collection, id: string): Promise<void> {
    const existing = this.get(collection, id);
    if (!existing) throw missing(collection, id);
    if (collection === 'virtual-keys')
      await this.store.delete(HASH_INDEX, (existing as StoredVirtualKey).value_hash);
    await this.store.delete(collectionKey(collection), id);
    await this.reload(collection, id);
    await this.store.publish(CHANGED_CHANNEL, JSON.stringify([collection, id]));
  }

  /** A new value for a key; the old one stops working at once on every replica. */
  async rotate(id: string): Promise<Record<string, unknown>> {
    const existing = this.get<StoredVirtualKey>('virtual-keys', id);
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
    return { ...this.view('virtual-keys', rotated), value };
  }

  /** A resource as the API shows it: never the key's hash. */
  view(collection: Collection, resource: Stored): Record<string, unknown> {
    if (collection !== 'virtual-keys') return { ...resource };
    const { value_hash: _hash, ...visible } = resource as StoredVirtualKey;
    return visible;
  }
}

function normalizeProviderConfigs(input: unknown, previous: StoredVirtualKey['provider_configs']) {
  const configs = (input ?? []) as Array<Record<string, unknown>>;
  return configs.map((config) => {
    const { budget, budgets, ...rest } = config;
    const old = previous.find((candidate) => candidate.provider === config['provider']);
    return { ...rest, budgets: normalizeBudgets({ budgets, budget } as never, old?.budgets) };
  });
}
