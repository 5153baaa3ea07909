import { type Budget, GatewayError, newId, newVirtualKeyValue } from '@gw/shared';
import { CelError } from '@gw/shared/cel';
import type { DeleteResult, ResourceView } from './governance-messages.ts';
import type { GovernanceRepository } from './governance-repository.ts';
import {
  assertWholeResource,
  parseResourceInput,
  patchedInput,
  type ResourceInput,
} from './resource-input.ts';
import {
  REFERENCE_FIELDS,
  REFERRING_COLLECTIONS,
  type Referrer,
  referrersAmong,
  stillReferenced,
} from './resource-references.ts';
import {
  type Collection,
  ID_PREFIX,
  isVirtualKey,
  normalizeBudgets,
  normalizeProviderConfigs,
  type Stored,
  storedSchemas,
  storedVirtualKeySchema,
} from './resources.ts';
import { compileRuleExpression } from './routing/rule-expression.ts';
import { hashVirtualKey } from './virtual-key-hash.ts';

type BudgetInput = { budget?: Budget | undefined; budgets?: Budget[] | undefined };

/** The collections whose resources have no budgets. */
const WITHOUT_BUDGETS: ReadonlySet<Collection> = new Set(['model-aliases', 'routing-rules']);

/** The collection a routing rule's `scope_id` names, by its scope. */
const SCOPE_COLLECTIONS = {
  virtual_key: 'virtual-keys',
  team: 'teams',
  customer: 'customers',
} as const satisfies Record<string, Collection>;

function hint(value: string): string {
  return `sk-gw-…${value.slice(-4)}`;
}

/**
 * Every change to a governance resource: validated whole before anything is written, references checked, so
 * a refused change changes nothing and no write leaves a reference to a resource that does not exist.
 */
export class ResourceWrites {
  private readonly repository: GovernanceRepository;
  private readonly now: () => number;

  constructor(options: { repository: GovernanceRepository; now: () => number }) {
    this.repository = options.repository;
    this.now = options.now;
  }

  private timestamp(): string {
    return new Date(this.now()).toISOString();
  }

  /** Every owner a resource names must exist. */
  private async checkReferences(input: ResourceInput): Promise<void> {
    for (const [field, collection] of REFERENCE_FIELDS) {
      const id = (input as Partial<Record<string, unknown>>)[field];
      if (typeof id !== 'string' || (await this.repository.exists(collection, id))) continue;
      throw new GatewayError({
        type: 'invalid_request',
        message: `${field}: ${collection} '${id}' does not exist`,
        param: field,
      });
    }
  }

  /**
   * A routing rule's expression must compile (the 400 names the line and column of the error) and its scope
   * must name a resource that exists: a rule is refused at write, never found broken by a request.
   */
  private async checkRule(input: ResourceInput): Promise<void> {
    if (!('cel_expression' in input)) return;
    try {
      compileRuleExpression(input.cel_expression);
    } catch (error) {
      if (!(error instanceof CelError)) throw error;
      throw new GatewayError({
        type: 'invalid_request',
        message: `cel_expression: ${error.message}`,
        param: 'cel_expression',
      });
    }
    if (input.scope === 'global' || input.scope_id === undefined) return;
    const collection = SCOPE_COLLECTIONS[input.scope];
    if (await this.repository.exists(collection, input.scope_id)) return;
    throw new GatewayError({
      type: 'invalid_request',
      message: `scope_id: ${collection} '${input.scope_id}' does not exist`,
      param: 'scope_id',
    });
  }

  /** Creates a resource; for a virtual key the answer carries its value, the only time it is shown. */
  async create(
    collection: Collection,
    body: unknown,
    options: { id?: string; value?: string } = {},
  ): Promise<ResourceView & { value?: string }> {
    const input = parseResourceInput(collection, body);
    await this.checkReferences(input);
    await this.checkRule(input);
    const id = options.id ?? newId(ID_PREFIX[collection]);
    if (await this.repository.exists(collection, id))
      throw new GatewayError({ type: 'conflict', message: `${collection} '${id}' already exists` });
    const timestamp = this.timestamp();
    const { budget, budgets, ...rest } = input as ResourceInput & BudgetInput;
    const base = {
      ...rest,
      id,
      ...(WITHOUT_BUDGETS.has(collection) ? {} : { budgets: normalizeBudgets({ budgets, budget }) }),
      created_at: timestamp,
      updated_at: timestamp,
    };
    if (collection !== 'virtual-keys') {
      const stored = storedSchemas[collection].parse(base);
      await this.repository.save(collection, stored);
      return this.repository.view(stored);
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
    await this.repository.save(collection, key);
    return { ...this.repository.view(key), value };
  }

  /**
   * PUT: the body is the whole resource (what it leaves out is removed or takes its default), so a body that
   * misses a required part (`PUT_REQUIRED`) is refused.
   */
  async replace(collection: Collection, id: string, body: unknown): Promise<ResourceView> {
    const existing = await this.repository.current(collection, id);
    assertWholeResource(collection, body);
    return this.rewrite(collection, existing, body);
  }

  /**
   * A config-file resource, written at start: the file wins for its ids. What it leaves out takes its schema's
   * default, as when it was first created (a file key without provider_configs allows nothing either way).
   * A key's `value` counts when the key is created; an existing key keeps its own.
   */
  async writeFromConfig(collection: Collection, id: string, body: unknown, value?: string): Promise<void> {
    // The store is asked, not this replica's memory: a store that lost its data (the reseed after it) no longer
    // holds what memory still does.
    const existing = await this.repository.stored(collection, id);
    if (!existing) {
      try {
        await this.create(collection, body, { id, ...(value === undefined ? {} : { value }) });
        return;
      } catch (error) {
        // Another replica starting at the same moment created it first: the file still wins, as a rewrite.
        if (!(error instanceof GatewayError && error.type === 'conflict')) throw error;
      }
    }
    await this.rewrite(collection, existing ?? (await this.repository.current(collection, id)), body);
  }

  /** PATCH: a JSON merge patch (RFC 7396) onto the stored resource; the result is validated whole. */
  async patch(collection: Collection, id: string, patch: Record<string, unknown>): Promise<ResourceView> {
    const existing = await this.repository.current(collection, id);
    return this.rewrite(collection, existing, patchedInput(existing, patch));
  }

  /** Writes a resource anew from a whole input, keeping its identity, key hash and budget ids. */
  private async rewrite(collection: Collection, existing: Stored, body: unknown): Promise<ResourceView> {
    const input = parseResourceInput(collection, body);
    await this.checkReferences(input);
    await this.checkRule(input);
    const { budget, budgets, ...rest } = input as ResourceInput & BudgetInput;
    const updated = {
      ...rest,
      id: existing.id,
      ...('budgets' in existing ? { budgets: normalizeBudgets({ budgets, budget }, existing.budgets) } : {}),
      created_at: existing.created_at,
      updated_at: this.timestamp(),
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
    await this.repository.save(collection, stored);
    return this.repository.view(stored);
  }

  /**
   * Deletes a resource. One that keys, teams or users still name is refused (409 naming them) unless
   * `cascade`: their reference is removed first, and nothing else is deleted (a key of a deleted team stays
   * usable, without that team's budgets).
   */
  async delete(
    collection: Collection,
    id: string,
    options: { cascade?: boolean } = {},
  ): Promise<DeleteResult> {
    const existing = await this.repository.current(collection, id);
    const referrers = await this.referrersOf(collection, id);
    if (referrers.length > 0 && !options.cascade) throw stillReferenced({ collection, id }, referrers);
    // Detached before the delete: a failure midway leaves references to something that still exists.
    for (const referrer of referrers) await this.detach(referrer);
    await this.repository.remove(collection, existing);
    return { deleted: id, ...(referrers.length > 0 ? { detached: referrers } : {}) };
  }

  private async referrersOf(collection: Collection, id: string): Promise<Referrer[]> {
    const rules: Referrer[] = (await this.repository.listCurrent('routing-rules'))
      .filter(
        (rule) =>
          rule.scope !== 'global' && SCOPE_COLLECTIONS[rule.scope] === collection && rule.scope_id === id,
      )
      .map((rule) => ({ collection: 'routing-rules', id: rule.id, field: 'scope_id' }));
    if (!REFERENCE_FIELDS.some(([, target]) => target === collection)) return rules;
    const candidates: Array<{ collection: Collection; resource: Stored }> = [];
    for (const referring of REFERRING_COLLECTIONS) {
      for (const resource of await this.repository.listCurrent(referring))
        candidates.push({ collection: referring, resource });
    }
    return [...referrersAmong(candidates, { collection, id }), ...rules];
  }

  private async detach({ collection, id, field }: Referrer): Promise<void> {
    const resource = this.repository.get(collection, id);
    if (!resource) return;
    if (field === 'scope_id') {
      await this.repository.remove(collection, resource);
      return;
    }
    const { [field]: _detached, ...rest } = resource as Stored & Partial<Record<string, unknown>>;
    await this.repository.save(
      collection,
      storedSchemas[collection].parse({ ...rest, updated_at: this.timestamp() }),
    );
  }

  /** A new value for a key; the old one stops working at once on every replica. */
  async rotate(id: string): Promise<ResourceView & { value: string }> {
    const existing = await this.repository.current('virtual-keys', id);
    const value = newVirtualKeyValue();
    const rotated = {
      ...existing,
      value_hash: hashVirtualKey(value),
      value_hint: hint(value),
      updated_at: this.timestamp(),
    };
    await this.repository.save('virtual-keys', rotated);
    await this.repository.forgetKeyHash(existing.value_hash);
    return { ...this.repository.view(rotated), value };
  }
}
