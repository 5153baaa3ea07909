// Updates that lose nothing (issue 18 item 7), in both modes (the cluster with two governance and two router
// replicas, so a change is made on one and served by the other): PATCH changes only what it names, PUT is a
// whole resource and refuses one without its required parts, a delete never leaves a reference to nothing,
// and a provider PATCH keeps the stored secrets.
import {
  type FakeOpenAi,
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, expectGatewayError, get, type Json, post } from './support/http.ts';

const ADMIN_TOKEN = 'updates-admin';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const UPSTREAM_KEY = 'sk-upstream-secret-4242';
const CHAT = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
const REQUEST_LIMIT = 5;

const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    (config: GatewayConfigInput) =>
      startCluster({ config, adminToken: ADMIN_TOKEN, replicas: { governance: 2, router: 2 } }),
  ],
] as const;

describe.each(MODES)('admin updates (%s)', (_mode, start) => {
  let fake: FakeOpenAi;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    gateway = await start({
      providers: {
        openai: {
          keys: [{ id: 'main', value: UPSTREAM_KEY }],
          network_config: { base_url: fake.url, max_retries: 0 },
        },
      },
      governance: { pricing: { 'gpt-4o-mini': { input: 1, output: 1 } } },
    });
  }, scaled(60_000));
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  const api = (path: string) => `${gateway.adminUrl}/api${path}`;
  const chat = (key: string) =>
    post(`${gateway.url}/v1/chat/completions`, CHAT, { headers: { 'x-gw-vk': key } });
  const createKey = async (body: Json) => {
    const created = await post(api('/governance/virtual-keys'), body, { headers: ADMIN });
    expect(created.status).toBe(201);
    return created.body as { id: string; value: string };
  };
  const readKey = async (id: string) => (await get(api(`/governance/virtual-keys/${id}`), ADMIN)).body;

  it('deactivates with a PATCH of is_active alone, and serves again with the same limits', async () => {
    const key = await createKey({
      name: 'billing',
      provider_configs: [
        {
          provider: 'openai',
          allowed_models: ['gpt-4o-mini'],
          budget: { max_limit: 5, reset_duration: '1d' },
        },
      ],
      budgets: [{ max_limit: 10, reset_duration: '1M' }],
      rate_limit: { request_max_limit: REQUEST_LIMIT, request_reset_duration: '1h' },
    });
    let served = 0;
    const serve = async () => {
      const answer = await chat(key.value);
      if (answer.status === 200) served++;
      return answer;
    };
    expect((await serve()).status).toBe(200);
    const before = await readKey(key.id);

    const off = await call('PATCH', api(`/governance/virtual-keys/${key.id}`), { is_active: false }, ADMIN);
    expect(off.status).toBe(200);
    const { updated_at: _updated, is_active: _active, ...kept } = before;
    expect(off.body).toMatchObject({ ...kept, is_active: false });
    // Refused by every replica. Asked with a model the key does not allow, so that a replica that has not heard
    // of the change yet refuses too (model_not_allowed) instead of serving: a request it served would count
    // against the limit (an inactive key's requests count against nothing), and a busy machine makes the
    // window for that as long as it likes.
    const refusedBy = (type: string) => async () => {
      const answers = await Promise.all(
        [0, 1, 2, 3].map(() =>
          post(
            `${gateway.url}/v1/chat/completions`,
            { ...CHAT, model: 'openai/gpt-4o' },
            {
              headers: { 'x-gw-vk': key.value },
            },
          ),
        ),
      );
      return answers.every((answer) => answer.body?.error?.type === type);
    };
    await waitFor(refusedBy('virtual_key_inactive'), { what: 'every replica to refuse the inactive key' });
    expectGatewayError(await serve(), { status: 403, type: 'virtual_key_inactive' });

    const on = await call('PATCH', api(`/governance/virtual-keys/${key.id}`), { is_active: true }, ADMIN);
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({
      provider_configs: before.provider_configs,
      budgets: before.budgets,
      rate_limit: before.rate_limit,
    });
    await waitFor(refusedBy('model_not_allowed'), { what: 'every replica to know the key active again' });
    // The same request limit, still counting what it counted before: exactly REQUEST_LIMIT served in all.
    let last = await serve();
    while (last.status === 200) last = await serve();
    expectGatewayError(last, { status: 429, type: 'request_limit_exceeded' });
    expect(served).toBe(REQUEST_LIMIT);
    const usage = await get(api(`/governance/virtual-keys/${key.id}/usage`), ADMIN);
    expect(usage.body.usage[0].entries).toContainEqual(
      expect.objectContaining({ kind: 'budget', budget_id: before.budgets[0].id, max_limit: 10 }),
    );
  });

  it('refuses a PUT without provider_configs, naming it, and changes nothing', async () => {
    const key = await createKey({ name: 'put-me', provider_configs: [{ provider: 'openai' }] });
    const before = await readKey(key.id);
    const refused = await call(
      'PUT',
      api(`/governance/virtual-keys/${key.id}`),
      { name: 'put-me', is_active: false },
      ADMIN,
    );
    expectGatewayError(refused, { status: 400, type: 'invalid_request' });
    expect(refused.body.error.message).toContain('provider_configs');
    expect(refused.body.error.param).toBe('provider_configs');
    expect(await readKey(key.id)).toEqual(before);
    expect((await chat(key.value)).status).toBe(200);
  });

  it('removes an optional field with null; a bad field is a 400 naming it and changes nothing', async () => {
    const key = await createKey({
      name: 'nulls',
      description: 'to be removed',
      provider_configs: [{ provider: 'openai' }],
      budgets: [{ max_limit: 1, reset_duration: '1d' }],
    });
    const url = api(`/governance/virtual-keys/${key.id}`);
    const removed = await call('PATCH', url, { description: null }, ADMIN);
    expect(removed.status).toBe(200);
    expect(removed.body).not.toHaveProperty('description');
    expect(removed.body.budgets).toHaveLength(1);

    const before = await readKey(key.id);
    const bad = await call(
      'PATCH',
      url,
      { name: 'renamed', budgets: [{ max_limit: 'lots', reset_duration: '1d' }] },
      ADMIN,
    );
    expectGatewayError(bad, { status: 400, type: 'invalid_request' });
    expect(bad.body.error.message).toMatch(/^budgets\[0\]\.max_limit: /);
    expect(bad.body.error.param).toBe('budgets[0].max_limit');
    const unknown = await call('PATCH', url, { colour: 'red' }, ADMIN);
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.message).toContain('colour');
    expect(await readKey(key.id)).toEqual(before);
  });

  it('refuses to delete a team keys still name (409 naming them); cascade detaches and keeps the keys', async () => {
    const team = await post(api('/governance/teams'), { name: 'platform' }, { headers: ADMIN });
    expect(team.status).toBe(201);
    const missing = await post(
      api('/governance/virtual-keys'),
      { name: 'orphan', provider_configs: [], team_id: 'team-does-not-exist' },
      { headers: ADMIN },
    );
    expectGatewayError(missing, { status: 400, type: 'invalid_request' });
    expect(missing.body.error.param).toBe('team_id');
    const first = await createKey({
      name: 'first',
      team_id: team.body.id,
      provider_configs: [{ provider: 'openai' }],
    });
    const second = await createKey({
      name: 'second',
      team_id: team.body.id,
      provider_configs: [{ provider: 'openai' }],
    });

    const teamUrl = api(`/governance/teams/${team.body.id}`);
    const refused = await call('DELETE', teamUrl, undefined, ADMIN);
    expectGatewayError(refused, { status: 409, type: 'conflict' });
    expect(refused.body.error.message).toContain(first.id);
    expect(refused.body.error.message).toContain(second.id);
    expect((await get(teamUrl, ADMIN)).status).toBe(200);
    expect((await call('DELETE', `${teamUrl}?cascade=maybe`, undefined, ADMIN)).status).toBe(400);

    const cascaded = await call('DELETE', `${teamUrl}?cascade=true`, undefined, ADMIN);
    expect(cascaded.status).toBe(200);
    expect(cascaded.body).toEqual({
      deleted: team.body.id,
      detached: expect.arrayContaining([
        { collection: 'virtual-keys', id: first.id, field: 'team_id' },
        { collection: 'virtual-keys', id: second.id, field: 'team_id' },
      ]),
    });
    // Gone on every governance replica once the change notice reached it.
    await waitFor(async () => {
      const reads = await Promise.all([get(teamUrl, ADMIN), get(teamUrl, ADMIN)]);
      return reads.every((read) => read.status === 404);
    });
    for (const key of [first, second]) {
      const read = await readKey(key.id);
      expect(read).not.toHaveProperty('team_id');
      expect(read.provider_configs).toMatchObject([{ provider: 'openai' }]);
      await waitFor(async () => (await chat(key.value)).status === 200);
    }
  });

  it('patches a provider: what it names changes, the stored secret stays', async () => {
    const url = api('/providers/openai');
    const read = await get(url, ADMIN);
    expect(JSON.stringify(read.body)).not.toContain(UPSTREAM_KEY);
    const patched = await call('PATCH', url, { network_config: { timeout_ms: 23_456 } }, ADMIN);
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ network_config: { timeout_ms: 23_456, base_url: fake.url } });
    // The key by id, its redacted value sent back: the secret is kept, the weight changes. The header shows
    // which replicas serve the patched config.
    const keyPatch = {
      keys: [{ id: 'main', value: read.body.keys[0].value, weight: 2 }],
      network_config: { extra_headers: { 'x-patched': 'keys' } },
    };
    const reweighted = await call('PATCH', url, keyPatch, ADMIN);
    expect(reweighted.status).toBe(200);
    expect(reweighted.body.keys).toEqual([expect.objectContaining({ id: 'main', weight: 2 })]);
    expect(reweighted.body.network_config).toMatchObject({ timeout_ms: 23_456, base_url: fake.url });
    expect(JSON.stringify(reweighted.body)).not.toContain(UPSTREAM_KEY);
    const bad = await call('PATCH', url, { network_config: { max_retries: 'three' } }, ADMIN);
    expectGatewayError(bad, { status: 400, type: 'invalid_request' });
    expect(bad.body.error.message).toContain('network_config.max_retries');
    expect((await call('PATCH', api('/providers/mistral'), {}, ADMIN)).status).toBe(404);

    const key = await createKey({ name: 'provider-check', provider_configs: [{ provider: 'openai' }] });
    // Every router replica (round robin) serves the patched config, and sends the stored secret upstream.
    await waitFor(async () => {
      fake.requests.length = 0;
      const answers = await Promise.all([0, 1, 2, 3].map(() => chat(key.value)));
      return (
        answers.every((answer) => answer.status === 200) &&
        fake.requests.every((request) => request.headers['x-patched'] === 'keys')
      );
    });
    expect(fake.requests).toHaveLength(4);
    for (const request of fake.requests) {
      expect(request.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    }
    expect((await get(url, ADMIN)).body.network_config.timeout_ms).toBe(23_456);
  });
});
