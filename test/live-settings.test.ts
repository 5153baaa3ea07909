// Every live section of `PUT /api/config` applies to the next request, in both modes (a cluster with two ingress
// replicas, whose router, governance and runners are other processes): client settings read by the ingress and
// by the router, governance settings read at admission, MCP settings read by the agent loop, request-log settings
// (the content size included) and cache settings. Each case changes one setting and waits until every ingress
// answers by it (a change notice crosses processes), then puts it back.
import {
  chatCompletion,
  type FakeOpenAi,
  type GatewayConfigInput,
  type LaunchedGateway,
  MCP_SERVER_ENTRIES,
  scaled,
  startCluster,
  startEmbedded,
  startFakeOpenAi,
  stdioServer,
  waitFor,
} from '@gw/testkit';
import { createTestDatabase, type TestDatabase } from '@gw/testkit/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, get, type Json, post } from './support/http.ts';

const ADMIN_TOKEN = 'live-settings-admin';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const KEY = 'sk-gw-live-settings-key-0123456789';

function config(fake: FakeOpenAi): GatewayConfigInput {
  return {
    providers: {
      openai: { keys: [{ value: 'sk-upstream' }], network_config: { base_url: fake.url, max_retries: 0 } },
    },
    governance: {
      // A budget a strict admission cannot cover at 4096 completion tokens, but can at about 1,600.
      virtual_keys: [
        {
          id: 'vk-live',
          name: 'live',
          value: KEY,
          provider_configs: [{ provider: 'openai', allowed_models: ['*'] }],
          budget: { max_limit: 0.001, reset_duration: '1d' },
        },
      ],
    },
    mcp: {
      clients: [
        {
          name: 'everything',
          connection_type: 'stdio',
          stdio_config: stdioServer(MCP_SERVER_ENTRIES.everything, ['stdio']),
          allow_by_default: true,
          inject_into_chat: true,
          tools_to_auto_execute: ['echo'],
        },
      ],
    },
    cache: { enabled: true, types: ['exact'] },
    logs: { content: true },
  };
}

const MODES = [
  ['embedded', (input: GatewayConfigInput) => startEmbedded({ config: input, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    (input: GatewayConfigInput, database?: TestDatabase) =>
      startCluster({
        config: input,
        adminToken: ADMIN_TOKEN,
        replicas: { ingress: 2 },
        env: { GW_LOGS_DATABASE_URL: database!.url },
      }),
  ],
] as const;

describe.each(MODES)('live settings (%s)', (mode, start) => {
  let fake: FakeOpenAi;
  let gateway: LaunchedGateway;
  let database: TestDatabase | undefined;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    if (mode === 'cluster') database = await createTestDatabase();
    gateway = await start(config(fake), database);
  }, scaled(90_000));
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
    await database?.drop();
  });

  const change = async (settings: object) => {
    const answer = await call('PUT', `${gateway.adminUrl}/api/config`, settings, ADMIN);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  };
  const chat = (url: string, body: Json = {}, headers: Record<string, string> = {}) =>
    post(
      `${url}/v1/chat/completions`,
      { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hello live settings' }], ...body },
      { headers },
    );
  /** Waits until every ingress answers as `holds` says, sending one request to each per try. */
  const everyIngress = (what: string, holds: (url: string) => Promise<boolean>) =>
    Promise.all(
      gateway.urls.map((url) => waitFor(() => holds(url), { timeoutMs: 10_000, what: `${what} (${url})` })),
    );

  it('client settings read by the router: raw responses and the fallback bound', async () => {
    await everyIngress('raw response shown', async (url) => {
      const answer = await chat(url);
      return answer.status === 200 && answer.body.extra_fields.raw_response !== undefined;
    });
    await change({ client: { send_raw_response: false, max_fallbacks: 0 } });
    await everyIngress('raw response left out', async (url) => {
      const answer = await chat(url);
      return answer.status === 200 && answer.body.extra_fields.raw_response === undefined;
    });
    for (const url of gateway.urls) {
      const refused = await chat(url, { fallbacks: ['openai/gpt-4o'] });
      expect(refused.status).toBe(400);
      expect(refused.body.error.message).toContain('client.max_fallbacks');
    }
    await change({ client: { send_raw_response: true, max_fallbacks: 5 } });
    await everyIngress(
      'fallbacks allowed again',
      async (url) => (await chat(url, { fallbacks: ['openai/gpt-4o'] })).status === 200,
    );
  });

  it('governance settings read at admission: a strict budget caps what the upstream is asked for', async () => {
    const keyed = { authorization: `Bearer ${KEY}` };
    const maxTokensSent = async (url: string) => {
      const before = fake.requests.length;
      const answer = await chat(url, {}, keyed);
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const sent = fake.requests.slice(before).at(-1)?.body as Json;
      return sent?.max_tokens as number | undefined;
    };
    for (const url of gateway.urls) expect(await maxTokensSent(url)).toBeUndefined();
    await change({ governance: { settings: { strict_budgets: true } } });
    await everyIngress('a strict admission capping max_tokens', async (url) => {
      const sent = await maxTokensSent(url);
      return sent !== undefined && sent > 16 && sent < 4096;
    });
    await change({ governance: { settings: { strict_budgets: false } } });
    await everyIngress('no cap once strict is off', async (url) => (await maxTokensSent(url)) === undefined);
  });

  it('MCP settings read by the agent loop: its depth', async () => {
    const toolCall = () =>
      fake.enqueue({
        json: chatCompletion({
          content: null,
          toolCalls: [
            {
              id: 'call_a',
              type: 'function',
              function: { name: 'everything-echo', arguments: '{"message":"x"}' },
            },
          ],
        }),
      });
    // Depth 0: no automatic round, so the model's call to an auto-executed tool goes back to the caller.
    await change({ mcp: { agent_max_depth: 0 } });
    await everyIngress('tool calls returned to the caller', async (url) => {
      toolCall();
      const answer = await chat(url);
      return answer.status === 200 && answer.body.choices[0].finish_reason === 'tool_calls';
    });
    await change({ mcp: { agent_max_depth: 5 } });
    await everyIngress('tool calls run by the gateway again', async (url) => {
      toolCall();
      const answer = await chat(url);
      return answer.status === 200 && answer.body.choices[0].finish_reason === 'stop';
    });
  });

  it('request-log settings: how much content a record keeps, and whether records are written', async () => {
    const recordOf = (id: string) =>
      waitFor(
        async () => {
          const answer = await get(`${gateway.adminUrl}/api/logs/${id}`, ADMIN);
          return answer.status === 200 ? (answer.body as Json) : undefined;
        },
        { timeoutMs: 15_000, what: `the log record of ${id}` },
      );
    await change({ logs: { content_max_bytes: 8 } });
    await everyIngress('content cut to 8 bytes', async (url) => {
      const answer = await chat(url);
      const record = await recordOf(answer.headers.get('x-request-id')!);
      return typeof record.request_content === 'string' && Buffer.byteLength(record.request_content) <= 8;
    });
    await change({ logs: { content_max_bytes: 65_536 } });
    await everyIngress('content kept whole', async (url) => {
      const record = await recordOf((await chat(url)).headers.get('x-request-id')!);
      return String(record.request_content).includes('hello live settings');
    });
    // Off, with a marker header required in the same change: an ingress that refuses a request without the
    // header has the new settings, so the next request it serves leaves no record.
    const marker = { 'x-live-marker': '1' };
    await change({ logs: { enabled: false }, client: { required_headers: ['x-live-marker'] } });
    await everyIngress('the change in force', async (url) => (await chat(url)).status === 400);
    const unrecorded = await Promise.all(
      gateway.urls.map(async (url) => (await chat(url, {}, marker)).headers.get('x-request-id')!),
    );
    await change({ logs: { enabled: true }, client: { required_headers: [] } });
    await everyIngress('records written again', async (url) => {
      const answer = await chat(url);
      return answer.status === 200 && Boolean(await recordOf(answer.headers.get('x-request-id')!));
    });
    for (const id of unrecorded)
      expect((await get(`${gateway.adminUrl}/api/logs/${id}`, ADMIN)).status).toBe(404);
  });

  it('cache settings: requests without a key are cached once the setting says so', async () => {
    const body = { messages: [{ role: 'user', content: `cache me ${mode}` }] };
    for (const url of gateway.urls) expect((await chat(url, body)).headers.get('x-gw-cache')).toBeNull();
    await change({ cache: { anonymous: true } });
    await everyIngress(
      'an anonymous exact hit',
      async (url) => (await chat(url, body)).headers.get('x-gw-cache') === 'hit',
    );
    await change({ cache: { anonymous: false } });
    await everyIngress(
      'anonymous requests not cached',
      async (url) => (await chat(url, body)).headers.get('x-gw-cache') === null,
    );
  });

  it('shows which settings apply at the next start only', async () => {
    const answer = await get(`${gateway.adminUrl}/api/config`, ADMIN);
    expect(answer.body.restart_required).toEqual(
      expect.arrayContaining([
        'cache.enabled',
        'mcp.worker_concurrency',
        'governance.settings.sweep_interval_ms',
      ]),
    );
    expect(answer.body.restart_required).not.toContain('logs.content_max_bytes');
  });
});
