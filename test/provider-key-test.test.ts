// POST /api/providers/{name}/keys/{id}/test: one real one-token call on that key alone, in both modes. The fake
// upstream shows which key's credential reached it and that a failing key is not replaced by another.
import {
  type FakeOpenAi,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
  startFakeOpenAi,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, post } from './support/http.ts';

const ADMIN_TOKEN = 'admin-token-for-key-tests';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };

const modes = [
  ['embedded', startEmbedded],
  ['cluster', startCluster],
] as const;

describe.each(modes)('testing a provider key (%s)', (_mode, start) => {
  let fake: FakeOpenAi;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    gateway = await start({
      adminToken: ADMIN_TOKEN,
      config: {
        providers: {
          openai: {
            keys: [
              { id: 'key-a', value: 'sk-upstream-test-a', models: ['gpt-4o-mini'] },
              { id: 'key-b', value: 'sk-upstream-test-b' },
            ],
            network_config: { base_url: fake.url, max_retries: 0 },
          },
        },
      },
    });
  }, scaled(60_000));
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  const test = (key: string, body?: Record<string, unknown>) =>
    post(`${gateway.adminUrl}/api/providers/openai/keys/${key}/test`, body, { headers: ADMIN });

  it('calls the upstream once with that key and its own model, and answers ok with the latency', async () => {
    const before = fake.requests.length;
    const answer = await test('key-a');
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body).toMatchObject({ ok: true, provider: 'openai', key_id: 'key-a' });
    expect(answer.body.latency_ms).toBeGreaterThanOrEqual(0);
    expect(fake.requests.length - before).toBe(1);
    const sent = fake.requests.at(-1)!;
    expect(sent.headers.authorization).toBe('Bearer sk-upstream-test-a');
    expect(sent.body).toMatchObject({ model: 'gpt-4o-mini', max_tokens: 1 });
  });

  it('needs a model for a key that allows every model, and takes the one named', async () => {
    const missing = await test('key-b');
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatchObject({ type: 'invalid_request', param: 'model' });
    const named = await test('key-b', { model: 'gpt-4o' });
    expect(named.body).toMatchObject({ ok: true, key_id: 'key-b' });
    expect(fake.requests.at(-1)!.headers.authorization).toBe('Bearer sk-upstream-test-b');
  });

  it('reports a key the upstream refuses, without trying another key', async () => {
    fake.enqueue({
      status: 401,
      json: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } },
    });
    const before = fake.requests.length;
    const answer = await test('key-a');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ ok: false, key_id: 'key-a', error: { status: 401 } });
    expect(answer.body.error.message).toContain('Incorrect API key');
    expect(fake.requests.length - before).toBe(1);
  });

  it('answers 404 for an unknown key or provider and 405 for another method', async () => {
    expect((await test('key-z')).status).toBe(404);
    const unknownProvider = await post(
      `${gateway.adminUrl}/api/providers/nope/keys/key-a/test`,
      {},
      { headers: ADMIN },
    );
    expect(unknownProvider.status).toBe(404);
    const get = await call(
      'GET',
      `${gateway.adminUrl}/api/providers/openai/keys/key-a/test`,
      undefined,
      ADMIN,
    );
    expect(get.status).toBe(405);
  });
});
