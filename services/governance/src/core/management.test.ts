// Updates that lose nothing (issue 18 item 7): PATCH merges into a resource and validates the result whole,
// PUT replaces it and refuses one without its required parts, and no write or delete leaves a reference to a
// resource that does not exist. Two cores on one store stand for two governance replicas.
import { GatewayError, parseGatewayConfig, silentLogger } from '@gw/shared';
import { MemoryStore, type Store } from '@gw/shared/store';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { liveGovernance } from '../testing/live-governance.ts';
import { GovernanceCore } from './governance-core.ts';
import type { ManageRequest } from './governance-messages.ts';

const cores: GovernanceCore[] = [];
const stores: Store[] = [];
afterAll(async () => {
  await Promise.all(cores.map((core) => core.close()));
  await Promise.all(stores.map((store) => store.close()));
});

async function startCore(store: Store): Promise<GovernanceCore> {
  const config = parseGatewayConfig({ governance: { settings: { sweep_interval_ms: 0 } } });
  const core = await GovernanceCore.start({
    store,
    logger: silentLogger(),
    ...liveGovernance(config),
  });
  cores.push(core);
  return core;
}

async function refusal(promise: Promise<unknown>): Promise<GatewayError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a GatewayError');
}

const KEY = {
  name: 'billing',
  description: 'the billing service',
  provider_configs: [
    { provider: 'openai', allowed_models: ['gpt-4o-mini'], budget: { max_limit: 5, reset_duration: '1d' } },
  ],
  budgets: [{ max_limit: 10, reset_duration: '1M' }],
  rate_limit: { request_max_limit: 100, request_reset_duration: '1m' },
};

describe('governance management', () => {
  let core: GovernanceCore;
  // Loosely typed: answers are asserted field by field.
  let manage: (request: ManageRequest) => Promise<Record<string, unknown>>;
  let key: Record<string, unknown>;

  beforeEach(async () => {
    const store = await MemoryStore.open();
    stores.push(store);
    core = await startCore(store);
    manage = async (request) => (await core.manage(request)) as Record<string, unknown>;
    key = await manage({ action: 'create', collection: 'virtual-keys', body: KEY });
  });

  const keyId = () => String(key['id']);
  const read = () => manage({ action: 'get', collection: 'virtual-keys', id: keyId() });
  const patch = (body: Record<string, unknown>) =>
    manage({ action: 'patch', collection: 'virtual-keys', id: keyId(), body });

  it('PATCH changes what it names and keeps provider configs, budgets (their ids too) and the rate limit', async () => {
    const before = await read();
    const patched = await patch({ is_active: false });
    const { updated_at: _before, is_active: _active, ...unchanged } = before;
    expect(patched).toMatchObject({ ...unchanged, is_active: false });
    expect(await read()).toEqual(patched);
    const reactivated = await patch({ is_active: true });
    expect(reactivated['budgets']).toEqual(before['budgets']);
    expect(reactivated['provider_configs']).toEqual(before['provider_configs']);
  });

  it('PATCH with null removes an optional field; a required one is a 400 naming it', async () => {
    const patched = await patch({ description: null, rate_limit: null });
    expect(patched).not.toHaveProperty('description');
    expect(patched).not.toHaveProperty('rate_limit');
    expect(patched['budgets']).toHaveLength(1);
    const refused = await refusal(patch({ name: null }));
    expect(refused).toMatchObject({ type: 'invalid_request', param: 'name', message: 'name: is required' });
  });

  it('PATCH of a bad or unknown field is a 400 naming it, and changes nothing', async () => {
    const before = await read();
    const bad = await refusal(
      patch({ is_active: false, budgets: [{ max_limit: -1, reset_duration: '1d' }] }),
    );
    expect(bad).toMatchObject({ type: 'invalid_request', param: 'budgets[0].max_limit' });
    expect(bad.message).toMatch(/^budgets\[0\]\.max_limit: /);
    const deep = await refusal(patch({ provider_configs: [{ provider: 'openai', weight: 'heavy' }] }));
    expect(deep.message).toMatch(/^provider_configs\[0\]\.weight: /);
    const unknown = await refusal(patch({ colour: 'red' }));
    expect(unknown).toMatchObject({ param: 'colour', message: 'colour: is not a field of virtual-keys' });
    expect(await read()).toEqual(before);
  });

  it('PATCH of budgets keeps their ids by position, and `budget` stands for them', async () => {
    const [budget] = (await read())['budgets'] as Array<{ id: string }>;
    const raised = await patch({ budgets: [{ max_limit: 20, reset_duration: '1M' }] });
    expect(raised['budgets']).toEqual([
      { id: budget!.id, max_limit: 20, reset_duration: '1M', calendar_aligned: false },
    ]);
    const single = await patch({ budget: { max_limit: 30, reset_duration: '1M' } });
    expect(single['budgets']).toMatchObject([{ id: budget!.id, max_limit: 30 }]);
    expect((await patch({ budget: null }))['budgets']).toEqual([]);
  });

  it('PUT replaces the whole resource and refuses one without provider_configs, naming it', async () => {
    const refused = await refusal(
      manage({
        action: 'update',
        collection: 'virtual-keys',
        id: keyId(),
        body: { name: 'billing', is_active: false },
      }),
    );
    expect(refused).toMatchObject({ type: 'invalid_request', param: 'provider_configs' });
    expect(refused.message).toContain('provider_configs: is required in a PUT');
    expect((await read())['is_active']).toBe(true);
    const replaced = await manage({
      action: 'update',
      collection: 'virtual-keys',
      id: keyId(),
      body: { name: 'billing', provider_configs: [] },
    });
    // What a PUT leaves out is gone: it is the whole resource.
    expect(replaced).toMatchObject({ provider_configs: [], budgets: [] });
    expect(replaced).not.toHaveProperty('rate_limit');
    const team = await refusal(manage({ action: 'update', collection: 'teams', id: 'team-x', body: {} }));
    expect(team.type).toBe('not_found');
  });

  it('refuses a reference to an owner that does not exist, on create, PUT and PATCH', async () => {
    const created = await refusal(
      manage({ action: 'create', collection: 'virtual-keys', body: { ...KEY, team_id: 'team-nope' } }),
    );
    expect(created).toMatchObject({ param: 'team_id', message: "team_id: teams 'team-nope' does not exist" });
    expect((await refusal(patch({ customer_id: 'cus-nope' }))).param).toBe('customer_id');
    const user = await refusal(
      manage({ action: 'create', collection: 'users', body: { name: 'ann', team_id: 'team-nope' } }),
    );
    expect(user.param).toBe('team_id');
  });

  it('refuses to delete an owner others still name (409 naming them); cascade detaches and deletes no key', async () => {
    const customer = await manage({ action: 'create', collection: 'customers', body: { name: 'acme' } });
    const team = await manage({
      action: 'create',
      collection: 'teams',
      body: { name: 'platform', customer_id: customer['id'] },
    });
    await patch({ team_id: team['id'], customer_id: customer['id'] });
    const user = await manage({
      action: 'create',
      collection: 'users',
      body: { name: 'ann', team_id: team['id'] },
    });

    const refused = await refusal(manage({ action: 'delete', collection: 'teams', id: String(team['id']) }));
    expect(refused.type).toBe('conflict');
    expect(refused.status).toBe(409);
    expect(refused.message).toContain(`virtual-keys '${keyId()}' (team_id)`);
    expect(refused.message).toContain(`users '${user['id']}' (team_id)`);
    expect(refused.message).toContain('?cascade=true');

    const customerRefused = await refusal(
      manage({ action: 'delete', collection: 'customers', id: String(customer['id']) }),
    );
    expect(customerRefused.message).toContain(`teams '${team['id']}' (customer_id)`);

    const deleted = await manage({
      action: 'delete',
      collection: 'teams',
      id: String(team['id']),
      cascade: true,
    });
    expect(deleted).toEqual({
      deleted: team['id'],
      detached: expect.arrayContaining([
        { collection: 'virtual-keys', id: keyId(), field: 'team_id' },
        { collection: 'users', id: user['id'], field: 'team_id' },
      ]),
    });
    const detached = await read();
    expect(detached).not.toHaveProperty('team_id');
    expect(detached).toMatchObject({
      customer_id: customer['id'],
      provider_configs: [{ provider: 'openai' }],
    });
    expect(await manage({ action: 'get', collection: 'users', id: String(user['id']) })).not.toHaveProperty(
      'team_id',
    );
    // Nothing names the model alias collection: a plain delete.
    const alias = await manage({
      action: 'create',
      collection: 'model-aliases',
      body: { name: 'fast', targets: [{ model: 'openai/gpt-4o-mini' }] },
    });
    expect(await manage({ action: 'delete', collection: 'model-aliases', id: String(alias['id']) })).toEqual({
      deleted: alias['id'],
    });
  });

  it('sees a reference written by another replica a moment ago', async () => {
    const store = await MemoryStore.open();
    stores.push(store);
    const [first, second] = [await startCore(store), await startCore(store)];
    const unit = (
      await first.manage({ action: 'create', collection: 'business-units', body: { name: 'emea' } })
    ).id;
    await second.manage({
      action: 'create',
      collection: 'virtual-keys',
      body: { name: 'k', provider_configs: [], business_unit_id: unit },
    });
    const refused = await refusal(first.manage({ action: 'delete', collection: 'business-units', id: unit }));
    expect(refused.message).toContain('(business_unit_id)');
  });
});
