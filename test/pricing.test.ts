// Prices set through `/api/pricing` apply to the next request, in both modes (a cluster with two ingress replicas,
// each admitting and settling on its own): a model without a price is refused under a budget with a message
// that says where to price it; priced through the API, the next request on every ingress is served and charged
// its tokens at the new price; changed again, the charge follows; deleted, the model is refused again; the
// unpriced default prices it then. An override of one provider's model (`openai/gpt-4o`) changes the charge of
// that provider's calls alone: Azure's calls of the same model stay at the built-in price. A Viewer reads prices
// and cannot change them.
import {
  type FakeOpenAi,
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startEmbedded,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { startClusterWithLogs } from '@gw/testkit/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, get, type Json, post } from './support/http.ts';

const ADMIN_TOKEN = 'pricing-admin';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const MODEL = 'gpt-house-model';
/** The fake answers 11 prompt tokens (2 of them cached) and 7 completion tokens. */
const costOf = (price: { input: number; output: number }) => (11 * price.input + 7 * price.output) / 1e6;
/** gpt-4o's built-in price of that answer: 9 uncached prompt tokens at $2.50, 2 cached at $1.25, 7 out at $10. */
const GPT_4O_LIST_COST = (9 * 2.5 + 2 * 1.25 + 7 * 10) / 1e6;

function config(fake: FakeOpenAi): GatewayConfigInput {
  return {
    providers: {
      openai: { keys: [{ value: 'sk-upstream' }], network_config: { base_url: fake.url, max_retries: 0 } },
      // Azure OpenAI's deployments answer at paths of their own: the fake answers a chat there too.
      azure: { keys: [{ value: 'azure-upstream' }], network_config: { base_url: fake.url, max_retries: 0 } },
    },
  };
}

const MODES = [
  ['embedded', (input: GatewayConfigInput) => startEmbedded({ config: input, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    // A cluster keeps its audit log in PostgreSQL.
    (input: GatewayConfigInput) =>
      startClusterWithLogs({
        config: input,
        adminToken: ADMIN_TOKEN,
        replicas: { ingress: 2 },
      }),
  ],
] as const;

describe.each(MODES)('pricing (%s)', (_mode, start) => {
  let fake: FakeOpenAi;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    gateway = await start(config(fake));
  }, scaled(90_000));
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  const pricing = (method: string, path: string, body?: Json, headers = ADMIN) =>
    call(method, `${gateway.adminUrl}/api/pricing${path}`, body, headers);
  const createKey = async (providers = ['openai']) => {
    const created = await post(
      `${gateway.adminUrl}/api/governance/virtual-keys`,
      {
        name: `budgeted-${Math.random().toString(36).slice(2)}`,
        provider_configs: providers.map((provider) => ({ provider, allowed_models: ['*'] })),
        budget: { max_limit: 100, reset_duration: '1d' },
      },
      { headers: ADMIN },
    );
    expect(created.status).toBe(201);
    return created.body as { id: string; value: string };
  };
  const chat = (url: string, key: string, model = `openai/${MODEL}`) =>
    post(
      `${url}/v1/chat/completions`,
      { model, messages: [{ role: 'user', content: 'price me' }] },
      { headers: { authorization: `Bearer ${key}` } },
    );
  const spent = async (id: string): Promise<number> =>
    (await get(`${gateway.adminUrl}/api/governance/virtual-keys/${id}/usage`, ADMIN)).body.usage[0].entries[0]
      .used;
  /** The request log record of an answer, once written (after governance's settle answered its cost). */
  const recordOf = (answer: { headers: Headers }) => {
    const id = answer.headers.get('x-request-id');
    return waitFor(
      async () => {
        const found = await get(`${gateway.adminUrl}/api/logs/${id}`, ADMIN);
        return found.status === 200 ? (found.body as { cost: number }) : undefined;
      },
      { timeoutMs: 15_000, what: `the log record of ${id}` },
    );
  };
  /**
   * Sends one request to an ingress and answers what governance charged it (its record's cost, the settle's
   * answer), after the key's spend has taken it: an admission's reservation shows in the spend before its
   * settle replaces it, so the spend alone cannot tell when a request is settled.
   */
  const chargeOf = async (url: string, key: { id: string; value: string }, model?: string) => {
    const answer = await chat(url, key.value, model);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return (await recordOf(answer)).cost;
  };
  /** Every settle of the key landed: its spend is the sum of its records' costs (checked at the end of a case). */
  const spendMatchesRecords = (key: { id: string }) =>
    waitFor(
      async () => {
        const records = await get(`${gateway.adminUrl}/api/logs?virtual_key_id=${key.id}&limit=1000`, ADMIN);
        const costs = (records.body as { records: Array<{ cost: number }> }).records;
        const total = costs.reduce((sum, record) => sum + record.cost, 0);
        return Math.abs((await spent(key.id)) - total) < 1e-9;
      },
      { timeoutMs: 15_000, what: "the key's spend equal to its records' costs" },
    );
  /** Waits until every ingress answers as `holds` says. */
  const everyIngress = (what: string, holds: (url: string) => Promise<boolean>) =>
    Promise.all(
      gateway.urls.map((url) => waitFor(() => holds(url), { timeoutMs: 10_000, what: `${what} (${url})` })),
    );

  it('refuses a model without a price under a budget, naming it and where to price it', async () => {
    const key = await createKey();
    for (const url of gateway.urls) {
      const refused = await chat(url, key.value);
      expect(refused.status).toBe(403);
      expect(refused.body.error.type).toBe('model_not_allowed');
      expect(refused.body.error.message).toContain(`model '${MODEL}' has no price`);
      expect(refused.body.error.message).toContain(`PUT /api/pricing/models/${MODEL}`);
      expect(refused.body.error.message).toContain('Pricing page');
    }
    expect(fake.requests.filter((request) => JSON.stringify(request.body).includes(MODEL))).toEqual([]);
  });

  it('charges the next request on every ingress the price set through the API, and follows each change', async () => {
    const key = await createKey();
    const first = { input: 1000, output: 2000 };
    const put = await pricing('PUT', `/models/${MODEL}`, first);
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.effective).toEqual({ price: first, from: 'override', priced_as: MODEL });

    await everyIngress('the priced model served', async (url) => (await chat(url, key.value)).status === 200);
    for (const url of gateway.urls) expect(await chargeOf(url, key)).toBeCloseTo(costOf(first), 9);

    const patched = await pricing('PATCH', `/models/${MODEL}`, { output: 4000 });
    expect(patched.body.override).toEqual({ input: 1000, output: 4000 });
    const second = { input: 1000, output: 4000 };
    await everyIngress(
      'the changed price charged',
      async (url) => Math.abs((await chargeOf(url, key)) - costOf(second)) < 1e-9,
    );

    const listed = await pricing('GET', '');
    expect(listed.body.overrides[MODEL]).toEqual(second);
    expect(listed.body.effective).toContainEqual({ model: MODEL, price: second, from: 'override' });

    expect((await pricing('DELETE', `/models/${MODEL}`)).status).toBe(200);
    await everyIngress('the model refused again', async (url) => (await chat(url, key.value)).status === 403);

    const unpriced = { input: 1, output: 1 };
    expect((await pricing('PUT', '/unpriced', unpriced)).status).toBe(200);
    await everyIngress(
      'the unpriced default charged',
      async (url) => (await chat(url, key.value)).status === 200,
    );
    for (const url of gateway.urls) expect(await chargeOf(url, key)).toBeCloseTo(costOf(unpriced), 9);
    expect((await pricing('DELETE', '/unpriced')).status).toBe(200);
    await everyIngress(
      'the model refused once more',
      async (url) => (await chat(url, key.value)).status === 403,
    );
    await spendMatchesRecords(key);
  });

  it("charges an override of one provider's model to that provider's calls alone", async () => {
    const key = await createKey(['openai', 'azure']);
    for (const url of gateway.urls) {
      expect(await chargeOf(url, key, 'openai/gpt-4o')).toBeCloseTo(GPT_4O_LIST_COST, 12);
      expect(await chargeOf(url, key, 'azure/gpt-4o')).toBeCloseTo(GPT_4O_LIST_COST, 12);
    }
    const price = { input: 1000, output: 2000 };
    const put = await pricing('PUT', `/models/${encodeURIComponent('openai/gpt-4o')}`, price);
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body).toMatchObject({ model: 'openai/gpt-4o', provider: 'openai', override: price });
    expect((await pricing('GET', '')).body.effective).toContainEqual({
      model: 'openai/gpt-4o',
      provider: 'openai',
      price,
      from: 'override',
    });

    await everyIngress(
      "openai's price charged",
      async (url) => Math.abs((await chargeOf(url, key, 'openai/gpt-4o')) - costOf(price)) < 1e-9,
    );
    for (const url of gateway.urls) {
      expect(await chargeOf(url, key, 'openai/gpt-4o')).toBeCloseTo(costOf(price), 12);
      expect(await chargeOf(url, key, 'azure/gpt-4o')).toBeCloseTo(GPT_4O_LIST_COST, 12);
    }
    // Both providers were asked for the model (Azure as its deployment).
    expect(fake.requests.some((request) => request.path.includes('/openai/deployments/gpt-4o/'))).toBe(true);
    expect((await pricing('DELETE', `/models/${encodeURIComponent('openai/gpt-4o')}`)).status).toBe(200);
    await spendMatchesRecords(key);
  });

  it('keeps a model name with a slash as one path segment, and refuses a bad name or price naming the field', async () => {
    const slashed = await pricing('PUT', `/models/${encodeURIComponent('acme/llama-3-8b')}`, {
      input: 0.1,
      output: 0.2,
    });
    expect(slashed.status, JSON.stringify(slashed.body)).toBe(200);
    expect(slashed.body.model).toBe('acme/llama-3-8b');
    expect((await pricing('GET', '')).body.overrides['acme/llama-3-8b']).toEqual({ input: 0.1, output: 0.2 });
    expect((await pricing('DELETE', `/models/${encodeURIComponent('acme/llama-3-8b')}`)).status).toBe(200);

    const badName = await pricing('PUT', `/models/${encodeURIComponent('bad\nname')}`, {
      input: 1,
      output: 1,
    });
    expect(badName.status).toBe(400);
    expect(badName.body.error.message).toContain('model');
    const badPrice = await pricing('PUT', '/models/some-model', { input: 1, output: -2 });
    expect(badPrice.status).toBe(400);
    expect(badPrice.body.error.message).toContain('output');
    expect((await pricing('GET', '/models/some-model')).body.override).toBeNull();
  });

  it('lets a Viewer read prices and refuses their change', async () => {
    const token = await call(
      'POST',
      `${gateway.adminUrl}/api/tokens`,
      { name: 'viewer', role: 'viewer' },
      ADMIN,
    );
    expect(token.status).toBe(201);
    const viewer = { authorization: `Bearer ${token.body.token}` };
    const read = await pricing('GET', '', undefined, viewer);
    expect(read.status).toBe(200);
    expect(read.body.built_in.find((entry: Json) => entry.model === 'gpt-4o-mini')).toMatchObject({
      provider: 'openai',
      as_of: '2026-11-23',
    });
    const refused = await pricing('PUT', `/models/${MODEL}`, { input: 1, output: 1 }, viewer);
    expect(refused.status).toBe(403);
    expect((await pricing('PUT', '/unpriced', { input: 1, output: 1 }, viewer)).status).toBe(403);
    expect((await pricing('GET', `/models/${MODEL}`)).body.override).toBeNull();
  });

  it('records each change in the audit log with the price before and after', async () => {
    await pricing('PUT', '/models/audited-model', { input: 2, output: 3 });
    await pricing('DELETE', '/models/audited-model');
    const records = async () => {
      const audit = await get(`${gateway.adminUrl}/api/audit-logs?limit=50`, ADMIN);
      expect(audit.status, JSON.stringify(audit.body)).toBe(200);
      return audit.body.records as Json[];
    };
    const entries = await waitFor(
      async () => {
        const recorded = await records();
        return recorded.some((entry) => entry.action === 'delete') && recorded;
      },
      { what: 'the changes recorded' },
    );
    const update = entries.find((entry) => entry.target === 'PUT /api/pricing/models/audited-model');
    expect(update).toMatchObject({ action: 'update', status: 200 });
    expect(update.after.override).toEqual({ input: 2, output: 3 });
    const deleted = entries.find((entry) => entry.target === 'DELETE /api/pricing/models/audited-model');
    expect(deleted).toMatchObject({ action: 'delete' });
    expect(deleted.before.override).toEqual({ input: 2, output: 3 });
  });
});
