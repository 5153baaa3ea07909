// Admin input that was accepted and failed later (issue 25 defect 10): a budget or limit past what the counters
// hold exactly (a $9.1e9 budget made every request of its key a 500), a provider PUT without `keys` (the
// provider stopped serving), and JSON sent as text/plain (parsed as if it were JSON). Both modes.
import {
  type FakeOpenAi,
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
  startFakeOpenAi,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, get, type Json, post } from './support/http.ts';

const ADMIN_TOKEN = 'input-checks-admin';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const CHAT = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };

const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    (config: GatewayConfigInput) => startCluster({ config, adminToken: ADMIN_TOKEN, readyTimeoutMs: 60_000 }),
  ],
] as const;

function expectField(answer: { status: number; body: Json }, field: string) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(400);
  expect(answer.body.error.param).toBe(field);
  expect(answer.body.error.message).toContain(`${field}:`);
}

describe.each(MODES)('admin input checks (%s)', (_mode, start) => {
  let fake: FakeOpenAi;
  let gateway: LaunchedGateway;
  const api = (path: string) => `${gateway.adminUrl}/api${path}`;
  const openai = () => ({
    keys: [{ id: 'main', value: 'sk-input-checks-0000000001' }],
    network_config: { base_url: fake.url, max_retries: 0 },
  });

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    gateway = await start({
      providers: { openai: openai() },
      governance: { pricing: { 'gpt-4o-mini': { input: 1, output: 1 } } },
    });
  }, scaled(90_000));
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  it('refuses a budget or limit the counters cannot hold exactly, naming the field; serves at the cap', async () => {
    const keys = api('/governance/virtual-keys');
    const key = (extra: Json) => ({ name: 'big', provider_configs: [{ provider: 'openai' }], ...extra });
    expectField(
      await call('POST', keys, key({ budget: { max_limit: 9.1e9, reset_duration: '1M' } }), ADMIN),
      'budget.max_limit',
    );
    expectField(
      await call('POST', keys, key({ budgets: [{ max_limit: 9e9, reset_duration: '1M' }] }), ADMIN),
      'budgets[0].max_limit',
    );
    expectField(
      await call('POST', keys, key({ rate_limit: { token_max_limit: 1e300 } }), ADMIN),
      'rate_limit.token_max_limit',
    );
    expectField(
      await call('POST', keys, key({ rate_limit: { request_max_limit: 2 ** 60 } }), ADMIN),
      'rate_limit.request_max_limit',
    );
    const nested = {
      name: 'big',
      provider_configs: [{ provider: 'openai', budget: { max_limit: 1e12, reset_duration: '1d' } }],
    };
    expectField(await call('POST', keys, nested, ADMIN), 'provider_configs[0].budget.max_limit');
    expectField(
      await call(
        'POST',
        api('/governance/customers'),
        { name: 'c', budget: { max_limit: 1e10, reset_duration: '1d' } },
        ADMIN,
      ),
      'budget.max_limit',
    );
    // The largest accepted budget and limits serve requests.
    const created = await call(
      'POST',
      keys,
      key({
        budget: { max_limit: 1e9, reset_duration: '1M' },
        rate_limit: { token_max_limit: 1e15, request_max_limit: 1e15 },
      }),
      ADMIN,
    );
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    for (let index = 0; index < 2; index++) {
      const answer = await post(`${gateway.url}/v1/chat/completions`, CHAT, {
        headers: { 'x-gw-vk': created.body.value },
      });
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    }
  });

  it('refuses a provider PUT without keys, as a virtual key PUT without provider_configs; PATCH keeps them', async () => {
    const partial = await call(
      'PUT',
      api('/providers/openai'),
      { network_config: { base_url: fake.url, timeout_ms: 5_000 } },
      ADMIN,
    );
    expectField(partial, 'keys');
    expect((await get(api('/providers/openai'), ADMIN)).body.keys).toHaveLength(1);
    expect((await post(`${gateway.url}/v1/chat/completions`, CHAT)).status).toBe(200);
    const patched = await call(
      'PATCH',
      api('/providers/openai'),
      { network_config: { timeout_ms: 5_000 } },
      ADMIN,
    );
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    expect(patched.body.keys).toHaveLength(1);
    const read = (await get(api('/providers/openai'), ADMIN)).body;
    expect((await call('PUT', api('/providers/openai'), read, ADMIN)).status).toBe(200);
  });

  it('does not parse JSON sent as text/plain or a form', async () => {
    for (const type of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded']) {
      const answer = await fetch(api('/governance/teams'), {
        method: 'POST',
        headers: { ...ADMIN, 'content-type': type },
        body: JSON.stringify({ name: 'plain' }),
      });
      const body = (await answer.json()) as Json;
      expect(answer.status, JSON.stringify(body)).toBe(400);
      expect(body.error.param).toBe('content-type');
      expect(body.error.message).toContain(type);
    }
    const teams = (await get(api('/governance/teams'), ADMIN)).body as Json[];
    expect(teams.some((team) => team.name === 'plain')).toBe(false);
    const json = await call(
      'POST',
      api('/governance/teams'),
      { name: 'json' },
      { ...ADMIN, 'content-type': 'application/json; charset=utf-8' },
    );
    expect(json.status).toBe(201);
  });
});
