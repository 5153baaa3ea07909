// Model aliases (issue 10 item 4), in both modes (the cluster with two governance replicas): a model name a
// client hard-codes (Claude Code's `claude-…`) is served by the models an alias names, from the config file or
// the admin API, per gateway and per virtual key, with weights and fallbacks; a change applies to every
// replica at once.
import {
  type FakeOpenAi,
  type FakeUpstream,
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
  startFakeAnthropic,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, post } from './support/http.ts';

const ADMIN_TOKEN = 'aliases-admin';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const KEY = 'sk-gw-aliases00000000000000000000000000000000000';
const ROUTED_KEY = 'sk-gw-aliases11111111111111111111111111111111111';

const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    (config: GatewayConfigInput) =>
      startCluster({ config, adminToken: ADMIN_TOKEN, replicas: { governance: 2 } }),
  ],
] as const;

describe.each(MODES)('model aliases (%s)', (_mode, start) => {
  let openai: FakeOpenAi;
  let anthropic: FakeUpstream;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    [openai, anthropic] = await Promise.all([startFakeOpenAi(), startFakeAnthropic()]);
    gateway = await start({
      client: { enforce_virtual_keys: true },
      providers: {
        openai: { keys: [{ value: 'sk-openai' }], network_config: { base_url: openai.url, max_retries: 0 } },
        anthropic: {
          keys: [{ value: 'sk-ant' }],
          network_config: { base_url: anthropic.url, max_retries: 0 },
        },
      },
      governance: {
        model_aliases: [
          // Claude Code's model names, served by OpenAI; Anthropic when OpenAI fails.
          {
            id: 'claude-code',
            name: 'claude-*',
            targets: [{ model: 'openai/gpt-4o' }],
            fallbacks: ['anthropic/claude-sonnet-4-5'],
          },
        ],
        virtual_keys: [
          {
            id: 'vk-plain',
            name: 'plain',
            value: KEY,
            provider_configs: [{ provider: 'openai' }, { provider: 'anthropic' }],
          },
          {
            id: 'vk-routed',
            name: 'routed',
            value: ROUTED_KEY,
            provider_configs: [{ provider: 'openai' }, { provider: 'anthropic' }],
            // This key's own alias wins over the gateway's.
            model_aliases: [{ name: 'claude-sonnet-4-5', targets: [{ model: 'anthropic/claude-opus-4-7' }] }],
          },
        ],
      },
    });
  }, scaled(60_000));
  afterAll(async () => {
    await gateway?.close();
    await Promise.all([openai?.close(), anthropic?.close()]);
  });

  const messages = (key: string, model: string) =>
    post(
      `${gateway.url}/anthropic/v1/messages`,
      { model, max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] },
      { headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' } },
    );

  it('serves a hard-coded model name by the alias’s target, across surfaces', async () => {
    const before = anthropic.requests.length;
    const answer = await messages(KEY, 'claude-sonnet-4-5');
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ type: 'message', content: [{ type: 'text' }] });
    expect(openai.last().body).toMatchObject({ model: 'gpt-4o' });
    expect(anthropic.requests.length).toBe(before);
  });

  it('falls back to the alias’s fallbacks when its target fails', async () => {
    openai.enqueue({ status: 500, json: { error: { message: 'down', type: 'server_error' } } });
    const answer = await messages(KEY, 'claude-haiku-4-5');
    expect(answer.status).toBe(200);
    expect(anthropic.last().body).toMatchObject({ model: 'claude-sonnet-4-5' });
  });

  it('looks at the key’s own aliases before the gateway’s', async () => {
    const answer = await messages(ROUTED_KEY, 'claude-sonnet-4-5');
    expect(answer.status).toBe(200);
    expect(anthropic.last().body).toMatchObject({ model: 'claude-opus-4-7' });
  });

  it('takes aliases made, changed and deleted through the admin API, on every replica at once', async () => {
    const created = await call(
      'POST',
      `${gateway.adminUrl}/api/governance/model-aliases`,
      {
        name: 'fast',
        targets: [
          { model: 'openai/gpt-4o-mini', weight: 1 },
          { model: 'anthropic/claude-haiku-4-5', weight: 0 },
        ],
      },
      ADMIN,
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^alias/), name: 'fast' });
    const chat = () =>
      post(
        `${gateway.url}/v1/chat/completions`,
        { model: 'fast', messages: [{ role: 'user', content: 'Hi' }] },
        { headers: { 'x-gw-vk': KEY } },
      );
    // Made on every process that admits requests once its change notice arrives (docs/governance.md "When a
    // change applies"); then every one of several answers uses the alias.
    await waitFor(async () => {
      const answer = await chat();
      return answer.status === 200 && (openai.last().body as { model: string }).model === 'gpt-4o-mini';
    });
    for (let round = 0; round < 4; round++) {
      expect((await chat()).status).toBe(200);
      expect(openai.last().body).toMatchObject({ model: 'gpt-4o-mini' });
    }

    const updated = await call(
      'PUT',
      `${gateway.adminUrl}/api/governance/model-aliases/${created.body.id}`,
      { name: 'fast', targets: [{ model: 'anthropic/claude-haiku-4-5' }] },
      ADMIN,
    );
    expect(updated.status).toBe(200);
    // Changed on every replica: four answers in a row reach Anthropic and none OpenAI.
    await waitFor(async () => {
      const openaiBefore = openai.requests.length;
      const answers = await Promise.all([chat(), chat(), chat(), chat()]);
      return answers.every((answer) => answer.status === 200) && openai.requests.length === openaiBefore;
    });
    expect(anthropic.last().body).toMatchObject({ model: 'claude-haiku-4-5' });

    const deleted = await call(
      'DELETE',
      `${gateway.adminUrl}/api/governance/model-aliases/${created.body.id}`,
      undefined,
      ADMIN,
    );
    expect(deleted.status).toBe(200);
    // Without the alias, 'fast' is a bare model name the key allows on both providers: sent as it is.
    await waitFor(async () => {
      await chat();
      return [openai.last(), anthropic.last()].some(
        (sent) => (sent.body as { model: string }).model === 'fast',
      );
    });
  });

  it('refuses an alias whose target is not <provider>/<model>, naming the field', async () => {
    const refused = await call(
      'POST',
      `${gateway.adminUrl}/api/governance/model-aliases`,
      { name: 'bad', targets: [{ model: 'gpt-4o' }] },
      ADMIN,
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain("targets[0].model: must be '<provider>/<model>'");
  });

  it('refuses a second alias of a name, on create and on rename, naming the one that has it', async () => {
    const refused = await call(
      'POST',
      `${gateway.adminUrl}/api/governance/model-aliases`,
      { name: 'claude-*', targets: [{ model: 'openai/gpt-4o-mini' }] },
      ADMIN,
    );
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ type: 'invalid_request', param: 'name' });
    expect(refused.body.error.message).toContain(
      "a model alias named 'claude-*' already exists (claude-code)",
    );
    const other = await call(
      'POST',
      `${gateway.adminUrl}/api/governance/model-aliases`,
      { name: 'other', targets: [{ model: 'openai/gpt-4o-mini' }] },
      ADMIN,
    );
    expect(other.status).toBe(201);
    const renamed = await call(
      'PATCH',
      `${gateway.adminUrl}/api/governance/model-aliases/${other.body.id}`,
      { name: 'claude-*' },
      ADMIN,
    );
    expect(renamed.status).toBe(400);
    // Its own name again is no duplicate.
    const same = await call(
      'PATCH',
      `${gateway.adminUrl}/api/governance/model-aliases/${other.body.id}`,
      { name: 'other', fallbacks: ['anthropic/claude-haiku-4-5'] },
      ADMIN,
    );
    expect(same.status).toBe(200);
    await call(
      'DELETE',
      `${gateway.adminUrl}/api/governance/model-aliases/${other.body.id}`,
      undefined,
      ADMIN,
    );
  });

  it('refuses an alias to a provider that does not exist, naming the field and the configured ones', async () => {
    const target = await call(
      'POST',
      `${gateway.adminUrl}/api/governance/model-aliases`,
      { name: 'ghost', targets: [{ model: 'openai/gpt-4o' }, { model: 'nope/gpt-4o' }] },
      ADMIN,
    );
    expect(target.status).toBe(400);
    expect(target.body.error.param).toBe('targets[1].model');
    expect(target.body.error.message).toBe(
      "targets[1].model: provider 'nope' does not exist (configured providers: anthropic, openai)",
    );
    const fallback = await call(
      'PATCH',
      `${gateway.adminUrl}/api/governance/model-aliases/claude-code`,
      { fallbacks: ['missing/claude-sonnet-4-5'] },
      ADMIN,
    );
    expect(fallback.status).toBe(400);
    expect(fallback.body.error.message).toContain("fallbacks[0]: provider 'missing' does not exist");
    const listed = await call('GET', `${gateway.adminUrl}/api/governance/model-aliases`, undefined, ADMIN);
    expect((listed.body as { name: string }[]).map((alias) => alias.name).sort()).toEqual(['claude-*']);
  });
});
