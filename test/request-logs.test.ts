// Request logs end to end (docs/logs.md), both modes: a request through the gateway leaves one record that
// /api/logs answers (provider, model, tokens, governance's cost, fallback index and key after a fallback, cache
// and guardrail outcomes, trace id), filters and pages work through the HTTP API, bad filters are 400s naming
// the parameter, content follows the key's opt-out, the live tail (WebSocket) is authenticated, filtered and
// drops a slow reader with 1013, and requests refused for overload are counted in /api/logs/dropped.
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import {
  chatCompletion,
  chatStreamEvents,
  type FakeOpenAi,
  type GatewayConfigInput,
  type LaunchedGateway,
  type OtlpReceiver,
  scaled,
  startCluster,
  startEmbedded,
  startFakeGuardrailWebhook,
  startFakeOpenAi,
  startOtlpReceiver,
  waitFor,
} from '@gw/testkit';
import { createTestDatabase, type TestDatabase } from '@gw/testkit/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { call, get, post } from './support/http.ts';

const ADMIN_TOKEN = 'admin-token-for-request-logs';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const KEY = 'sk-gw-logs0000000000000000000000000000000000000';
const QUIET_KEY = 'sk-gw-quiet000000000000000000000000000000000000';
const TEAM_KEY = 'sk-gw-teamkey0000000000000000000000000000000000';
// USD per million tokens: the fake answers 11 prompt and 7 completion tokens.
const PRICES = {
  'gpt-4o-mini': { input: 1.5, output: 6 },
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-audit': { input: 2.5, output: 10 },
};

function config(fake: FakeOpenAi, receiver: OtlpReceiver, hook: { url: string }): GatewayConfigInput {
  return {
    providers: {
      openai: {
        keys: [{ id: 'key-a', value: 'sk-upstream-logs-a' }],
        network_config: { base_url: fake.url, max_retries: 0 },
      },
    },
    governance: {
      virtual_keys: [
        {
          id: 'vk-logs',
          name: 'logs-key',
          value: KEY,
          provider_configs: [{ provider: 'openai', allowed_models: ['*'] }],
          budgets: [{ max_limit: 100, reset_duration: '1d' }],
        },
        {
          // Names only its team and user: the team's customer and business unit are charged too.
          id: 'vk-team',
          name: 'team-key',
          value: TEAM_KEY,
          team_id: 'team-t',
          user_id: 'user-u',
          provider_configs: [{ provider: 'openai', allowed_models: ['*'] }],
        },
        {
          id: 'vk-quiet',
          name: 'quiet-key',
          value: QUIET_KEY,
          log_content: false,
          provider_configs: [{ provider: 'openai', allowed_models: ['*'] }],
        },
      ],
      pricing: PRICES,
      customers: [
        { id: 'customer-c', name: 'customer c', budgets: [{ max_limit: 100, reset_duration: '1d' }] },
      ],
      business_units: [{ id: 'unit-b', name: 'unit b' }],
      teams: [{ id: 'team-t', name: 'team t', customer_id: 'customer-c', business_unit_id: 'unit-b' }],
      users: [{ id: 'user-u', name: 'user u' }],
    },
    cache: { enabled: true, types: ['exact'] },
    guardrails: {
      profiles: [
        { id: 'pii', type: 'builtin', pii: ['email'] },
        // Blocks BANNED, three seconds late for a SLOW text: an async finding after the record was written.
        { id: 'hook', type: 'webhook', url: `${hook.url}/check`, secret: 'hook-secret' },
      ],
      rules: [
        { id: 'redact-email', condition: 'true', action: 'REDACT', input_profiles: ['pii'] },
        { id: 'audit', condition: 'model == "gpt-4o-audit"', mode: 'async', input_profiles: ['hook'] },
      ],
    },
    tracing: { enabled: true, sampling_ratio: 1, endpoint: receiver.url },
    logs: { content: true, content_max_bytes: 65_536 },
    client: { allow_anonymous_admin: false },
  } as GatewayConfigInput;
}

interface LogRecord {
  id: string;
  [field: string]: unknown;
}

const modes = [
  ['embedded', (input: GatewayConfigInput) => startEmbedded({ config: input, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    (input: GatewayConfigInput, database?: TestDatabase) =>
      startCluster({
        config: input,
        adminToken: ADMIN_TOKEN,
        env: { GW_LOGS_DATABASE_URL: database!.url },
      }),
  ],
] as const;

describe.each(modes)('request logs (%s)', (mode, start) => {
  let fake: FakeOpenAi;
  let receiver: OtlpReceiver;
  let hook: Awaited<ReturnType<typeof startFakeGuardrailWebhook>>;
  let gateway: LaunchedGateway;
  let database: TestDatabase | undefined;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    receiver = await startOtlpReceiver();
    hook = await startFakeGuardrailWebhook({ secret: 'hook-secret' });
    if (mode === 'cluster') database = await createTestDatabase();
    gateway = await start(config(fake, receiver, hook), database);
  }, scaled(60_000));
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
    await receiver?.close();
    await hook?.close();
    await database?.drop();
  });

  const chat = (body: Record<string, unknown>, key = KEY, headers: Record<string, string> = {}) =>
    post(
      `${gateway.url}/v1/chat/completions`,
      { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hello logs' }], ...body },
      { headers: { authorization: `Bearer ${key}`, ...headers } },
    );
  const logs = async (query: string) => get(`${gateway.adminUrl}/api/logs?${query}`, ADMIN);
  /** The record of a request, once the writer (and in a cluster the log worker) stored it. */
  const recordOf = (id: string) =>
    waitFor(
      async () => {
        const answer = await get(`${gateway.adminUrl}/api/logs/${id}`, ADMIN);
        return answer.status === 200 ? (answer.body as LogRecord) : undefined;
      },
      { timeoutMs: 15_000, what: `the log record of ${id}` },
    );

  it('records a served request with its provider, model, tokens and the cost governance charged', async () => {
    const traceId = randomBytes(16).toString('hex');
    const answer = await chat({ user: 'u-1' }, KEY, { traceparent: `00-${traceId}-${'1'.repeat(16)}-01` });
    expect(answer.status).toBe(200);
    const id = answer.headers.get('x-request-id')!;
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const record = await recordOf(id);
    const cost = (11 * PRICES['gpt-4o-mini'].input + 7 * PRICES['gpt-4o-mini'].output) / 1_000_000;
    expect(record).toMatchObject({
      id,
      surface: 'openai',
      route: '/v1/chat/completions',
      provider: 'openai',
      model: 'gpt-4o-mini',
      requested_model: 'openai/gpt-4o-mini',
      status: 200,
      error_type: null,
      input_tokens: 11,
      output_tokens: 7,
      cached_tokens: 2,
      virtual_key_id: 'vk-logs',
      virtual_key_name: 'logs-key',
      selected_key_id: 'key-a',
      fallback_index: 0,
      cache_outcome: 'miss',
      guardrail_outcome: 'passed',
      trace_id: traceId,
      time_to_first_token_ms: null,
    });
    // Governance charges whole micro-dollars: the record holds exactly what it charged the key's budget.
    expect(record['cost']).toBeCloseTo(cost, 6);
    // The budget's use counts the settle once the slice that admitted it is renewed, within about a second
    // (docs/governance.md "What the reports show"): read until it holds exactly the record's cost, or fail.
    await waitFor(
      async () => {
        const usage = await get(`${gateway.adminUrl}/api/governance/virtual-keys/vk-logs/usage`, ADMIN);
        return usage.body.usage[0].entries[0].used === record['cost'];
      },
      { timeoutMs: 15_000, what: "the budget's use equal to the record's cost" },
    );
    expect(record['request_content']).toContain('hello logs');
    expect(record['response_content']).toContain('Hello from the fake upstream');
    expect(record['latency_ms']).toBeGreaterThan(0);
  });

  it('records the fallback that served and a cache hit', async () => {
    fake.enqueue({ status: 500, json: { error: { message: 'first target down', type: 'server_error' } } });
    const answer = await chat({
      model: 'openai/gpt-4o',
      fallbacks: ['openai/gpt-4o-mini'],
      messages: [{ role: 'user', content: 'fallback please' }],
    });
    expect(answer.status).toBe(200);
    const record = await recordOf(answer.headers.get('x-request-id')!);
    expect(record).toMatchObject({ fallback_index: 1, selected_key_id: 'key-a', model: 'gpt-4o-mini' });

    const again = await chat({
      model: 'openai/gpt-4o',
      fallbacks: ['openai/gpt-4o-mini'],
      messages: [{ role: 'user', content: 'fallback please' }],
    });
    expect(again.headers.get('x-gw-cache')).toBe('hit');
    expect(await recordOf(again.headers.get('x-request-id')!)).toMatchObject({
      cache_outcome: 'hit',
      status: 200,
    });
  });

  it("names every owner governance charged, a team's customer and business unit too, and filters by each", async () => {
    const answer = await chat({ messages: [{ role: 'user', content: 'owners' }] }, TEAM_KEY);
    expect(answer.status).toBe(200);
    const id = answer.headers.get('x-request-id')!;
    expect(await recordOf(id)).toMatchObject({
      virtual_key_id: 'vk-team',
      team_id: 'team-t',
      customer_id: 'customer-c',
      user_id: 'user-u',
      business_unit_id: 'unit-b',
    });
    for (const filter of [
      'customer_id=customer-c',
      'team_id=team-t',
      'user_id=user-u',
      'business_unit_id=unit-b',
      'virtual_key_id=vk-team',
    ]) {
      const page = await logs(filter);
      expect(page.status, filter).toBe(200);
      expect(
        page.body.records.map((record: LogRecord) => record.id),
        filter,
      ).toContain(id);
    }
    expect((await logs('business_unit_id=unit-other')).body.records).toEqual([]);
    // The customer's usage shows the charge the record names.
    const usage = await get(`${gateway.adminUrl}/api/governance/customers/customer-c/usage`, ADMIN);
    expect(usage.status).toBe(200);
    expect(usage.body.usage[0].entries[0].used).toBeGreaterThan(0);
  });

  it("lets a Developer read the dropped counts (no team in them) and only its team's records", async () => {
    const admin = (path: string, body: Record<string, unknown>) =>
      post(`${gateway.adminUrl}/api${path}`, body, { headers: ADMIN });
    const user = await admin('/users', {
      email: 'developer-logs@example.com',
      name: 'developer',
      role: 'developer',
      team_ids: ['team-t'],
    });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const token = await admin('/tokens', { name: 'developer', role: 'developer', user_id: user.body.id });
    const developer = { authorization: `Bearer ${token.body.token}` };
    const dropped = await get(`${gateway.adminUrl}/api/logs/dropped?from=0`, developer);
    expect(dropped.status, JSON.stringify(dropped.body)).toBe(200);
    expect(dropped.body).toHaveProperty('totals');
    const records = await get(`${gateway.adminUrl}/api/logs`, developer);
    expect(records.status).toBe(200);
    for (const record of records.body.records as LogRecord[]) expect(record.team_id).toBe('team-t');
  });

  it('records a request whose upstream failed with the target that failed', async () => {
    fake.enqueue({
      status: 400,
      json: { error: { message: 'no such thing', type: 'invalid_request_error' } },
    });
    const answer = await chat({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'fail me' }] });
    expect(answer.status).toBe(400);
    expect(await recordOf(answer.headers.get('x-request-id')!)).toMatchObject({
      status: 400,
      provider: 'openai',
      model: 'gpt-4o',
      requested_model: 'openai/gpt-4o',
      attempts: [
        {
          provider: 'openai',
          model: 'gpt-4o',
          status: 400,
          error_type: 'upstream_error',
          message: expect.stringContaining('no such thing'),
        },
      ],
    });
  });

  it('lists every target a failed request tried, with its error, and none for a served one', async () => {
    fake.enqueue({ status: 500, json: { error: { message: 'first is down', type: 'server_error' } } });
    fake.enqueue({ status: 503, json: { error: { message: 'second is overloaded', type: 'server_error' } } });
    const answer = await chat({
      model: 'openai/gpt-4o',
      fallbacks: ['openai/gpt-4o-mini'],
      messages: [{ role: 'user', content: 'every target fails' }],
    });
    expect(answer.status).toBe(503);
    const record = await recordOf(answer.headers.get('x-request-id')!);
    expect(record).toMatchObject({ status: 503, error_type: 'all_targets_failed' });
    expect(record['attempts']).toEqual([
      expect.objectContaining({
        provider: 'openai',
        model: 'gpt-4o',
        status: 500,
        message: expect.stringContaining('first is down'),
      }),
      expect.objectContaining({
        provider: 'openai',
        model: 'gpt-4o-mini',
        status: 503,
        message: expect.stringContaining('second is overloaded'),
      }),
    ]);
    // What the caller was told, what the last upstream answered, and the request as it was sent.
    expect(record['error_message']).toContain('all 2 targets failed');
    expect(record['upstream_status']).toBe(503);
    expect(JSON.parse(String(record['upstream_body']))).toEqual({
      error: { message: 'second is overloaded', type: 'server_error' },
    });
    expect(record['request_content']).toContain('every target fails');
    expect(record['response_content']).toBeNull();
    // A refusal that names a provider reached none: it lists no attempt, and names the key and owners refused.
    const refused = await chat(
      { model: 'openai/gpt-unpriced', messages: [{ role: 'user', content: 'no price' }] },
      TEAM_KEY,
    );
    expect(refused.status).toBe(403);
    const refusal = await recordOf(refused.headers.get('x-request-id')!);
    expect(refusal).toMatchObject({
      attempts: null,
      error_type: 'model_not_allowed',
      upstream_status: null,
      upstream_body: null,
      virtual_key_id: 'vk-team',
      virtual_key_name: 'team-key',
      team_id: 'team-t',
      customer_id: 'customer-c',
      user_id: 'user-u',
    });
    expect(refusal['error_message']).toContain('gpt-unpriced');
    const byName = await logs('virtual_key_name=team-key&status_class=4xx');
    expect(byName.body.records.map((record: LogRecord) => record.id)).toContain(refusal.id);
    const served = await chat({ messages: [{ role: 'user', content: 'served, no attempts' }] });
    expect((await recordOf(served.headers.get('x-request-id')!))['attempts']).toBeNull();
    // Saved by a fallback, whole or streamed: the target that failed first is listed all the same.
    for (const stream of [false, true]) {
      fake.enqueue({ status: 500, json: { error: { message: 'first is down', type: 'server_error' } } });
      if (stream) fake.enqueue({ events: chatStreamEvents() });
      const saved = await chat({
        model: 'openai/gpt-4o',
        fallbacks: ['openai/gpt-4o-mini'],
        stream,
        messages: [{ role: 'user', content: `a fallback saves me (stream: ${stream})` }],
      });
      expect(saved.status).toBe(200);
      expect(await recordOf(saved.headers.get('x-request-id')!)).toMatchObject({
        status: 200,
        fallback_index: 1,
        attempts: [{ provider: 'openai', model: 'gpt-4o', status: 500, error_type: 'upstream_error' }],
      });
    }
  });

  it('records a stream when it ends, with its time to first token', async () => {
    fake.enqueue({ events: chatStreamEvents() });
    const response = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({
        model: 'openai/gpt-4o-mini',
        messages: [{ role: 'user', content: 'stream it' }],
        stream: true,
      }),
    });
    await response.text();
    const record = await recordOf(response.headers.get('x-request-id')!);
    expect(record).toMatchObject({
      status: 200,
      input_tokens: 9,
      output_tokens: 3,
      response_content: 'Hello wörld',
    });
    expect(record['time_to_first_token_ms']).toBeGreaterThan(0);
  });

  it('records what the guardrails did', async () => {
    const answer = await chat({ messages: [{ role: 'user', content: 'write to jane@example.com' }] });
    expect(answer.status).toBe(246);
    const record = await recordOf(answer.headers.get('x-request-id')!);
    expect(record).toMatchObject({ status: 246, guardrail_outcome: 'redacted' });
    expect(record['request_content']).not.toContain('jane@example.com');
  });

  it('updates a written record when an async rule flags the request later, in the store', {
    timeout: scaled(30_000),
  }, async () => {
    const answer = await chat(
      {
        model: 'openai/gpt-4o-audit',
        messages: [{ role: 'user', content: 'a SLOW note with a BANNED word' }],
      },
      KEY,
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const id = answer.headers.get('x-request-id')!;
    // Written before the rule's finding (the webhook answers three seconds late)…
    expect(await recordOf(id)).toMatchObject({ guardrail_outcome: 'passed' });
    // …and amended when it arrives, as the metric counts it.
    await waitFor(
      async () => {
        const record = (await get(`${gateway.adminUrl}/api/logs/${id}`, ADMIN)).body as LogRecord;
        return record.guardrail_outcome === 'flagged' ? record : undefined;
      },
      { timeoutMs: 15_000, what: 'the flagged record' },
    );
  });

  it('keeps no content for a key that opted out', async () => {
    const answer = await chat({ messages: [{ role: 'user', content: 'secret words' }] }, QUIET_KEY);
    expect(answer.status).toBe(200);
    const record = await recordOf(answer.headers.get('x-request-id')!);
    expect(record).toMatchObject({
      virtual_key_id: 'vk-quiet',
      request_content: null,
      response_content: null,
    });
  });

  it('records refusals, and filters and pages through the HTTP API', async () => {
    const refused = await chat({}, 'sk-gw-unknown000000000000000000000000000000000');
    expect(refused.status).toBe(401);
    const denied = await recordOf(refused.headers.get('x-request-id')!);
    expect(denied).toMatchObject({ status: 401, error_type: 'virtual_key_invalid', provider: null });

    const errors = await logs('status_class=4xx');
    expect(errors.status).toBe(200);
    expect(errors.body.records.map((record: LogRecord) => record.id)).toContain(denied.id);
    expect(errors.body.records.every((record: LogRecord) => Number(record['status']) >= 400)).toBe(true);

    const quiet = await logs('virtual_key_id=vk-quiet');
    expect(quiet.body.records).toHaveLength(1);

    const first = await logs('limit=2&sort=time&order=asc');
    expect(first.body.records).toHaveLength(2);
    const second = await logs(
      `limit=2&sort=time&order=asc&cursor=${encodeURIComponent(first.body.next_cursor)}`,
    );
    const firstIds = first.body.records.map((record: LogRecord) => record.id);
    for (const record of second.body.records as LogRecord[]) expect(firstIds).not.toContain(record.id);

    const stats = await get(`${gateway.adminUrl}/api/logs/stats?group_by=provider&bucket_ms=3600000`, ADMIN);
    expect(stats.status).toBe(200);
    expect(stats.body.buckets.some((bucket: { group: string }) => bucket.group === 'openai')).toBe(true);
  });

  it('answers 400 naming a bad filter, 404 for an unknown id, 401 without the admin token', async () => {
    const bad = await logs('status_class=6xx');
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('status_class');
    expect((await logs('limit=0')).body.error.param).toBe('limit');
    expect((await logs('cursor=nonsense')).body.error.param).toBe('cursor');
    expect((await get(`${gateway.adminUrl}/api/logs/dropped?bucket_ms=5`, ADMIN)).body.error.param).toBe(
      'bucket_ms',
    );
    expect((await get(`${gateway.adminUrl}/api/logs/no-such-id`, ADMIN)).status).toBe(404);
    expect((await get(`${gateway.adminUrl}/api/logs`)).status).toBe(401);
  });

  it('refuses the live tail without the admin token, before upgrading', async () => {
    const socket = new WebSocket(`${gateway.adminUrl.replace('http', 'ws')}/api/logs/stream`);
    socket.on('error', () => {});
    const [, response] = (await once(socket, 'unexpected-response')) as [unknown, { statusCode: number }];
    expect(response.statusCode).toBe(401);
    socket.terminate();
  });

  it('sends live records that match the filter', async () => {
    const socket = new WebSocket(
      `${gateway.adminUrl.replace('http', 'ws')}/api/logs/stream?virtual_key_id=vk-quiet`,
      {
        headers: ADMIN,
      },
    );
    await once(socket, 'open');
    const received: LogRecord[] = [];
    socket.on('message', (data) => received.push(JSON.parse(String(data))));
    // The tail is live once a record reaches it (the cluster's tail misses what was stored before its first
    // XREAD): this key's requests until one does.
    await waitFor(
      async () => {
        if (received.length > 0) return true;
        await chat({ messages: [{ role: 'user', content: 'until the tail is live' }] }, QUIET_KEY);
        return false;
      },
      { timeoutMs: 10_000, intervalMs: 200, what: 'the tail to be live' },
    );
    // Then a request of another key (filtered out) and one of this key.
    await chat({ messages: [{ role: 'user', content: 'not for this tail' }] });
    const answer = await chat({ messages: [{ role: 'user', content: 'for the tail' }] }, QUIET_KEY);
    const id = answer.headers.get('x-request-id')!;
    await waitFor(() => received.some((record) => record.id === id), {
      timeoutMs: 10_000,
      what: 'the live record',
    });
    expect(received.every((record) => record['virtual_key_id'] === 'vk-quiet')).toBe(true);
    socket.close();
  });

  it('closes a live tail that does not read with 1013, and keeps serving', {
    timeout: scaled(120_000),
  }, async () => {
    const socket = new WebSocket(`${gateway.adminUrl.replace('http', 'ws')}/api/logs/stream`, {
      headers: ADMIN,
    });
    await once(socket, 'open');
    // This client reads nothing: its socket is paused while records (~60 KB of content each) pile up, far past
    // what the socket buffers and the gateway's 1 MiB per client hold.
    const raw = (socket as unknown as { _socket: import('node:net').Socket })._socket;
    raw.pause();
    const closed = once(socket, 'close');
    // A second tail that reads counts what the tails were sent. Records reach a tail once the writer stored
    // them, which lags a burst of 15 MB (seconds on a loaded machine; a record the writer's bounded queue dropped
    // never comes): the paused client is resumed once the tail has gone quiet, so the test waits for the writer,
    // not for a guess.
    const watcher = new WebSocket(`${gateway.adminUrl.replace('http', 'ws')}/api/logs/stream`, {
      headers: ADMIN,
    });
    await once(watcher, 'open');
    let tailed = 0;
    watcher.on('message', () => tailed++);
    const big = 'x'.repeat(60_000);
    let served = 0;
    for (let round = 0; round < 25; round++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, () => chat({ messages: [{ role: 'user', content: big }] })),
      );
      served += answers.filter((answer) => answer.status === 200).length;
    }
    expect(served).toBe(250);
    let seen = -1;
    await waitFor(
      () => {
        const quiet = tailed > 0 && tailed === seen;
        seen = tailed;
        return quiet;
      },
      { timeoutMs: 90_000, intervalMs: 2_000, what: 'the live tail to go quiet' },
    );
    watcher.close();
    raw.resume();
    const [code] = (await closed) as [number];
    expect(code).toBe(1013);
    expect((await chat({})).status).toBe(200);
  });

  it('counts requests dropped by a full provider queue in /api/logs/dropped', {
    timeout: scaled(30_000),
  }, async () => {
    // One request at a time and no queue: with the upstream slow, the others sent at once are dropped (503).
    const network = (settings: Record<string, unknown>) =>
      call('PATCH', `${gateway.adminUrl}/api/providers/openai`, { network_config: settings }, ADMIN);
    expect((await network({ concurrency: 1, buffer_size: 0, drop_excess_requests: true })).status).toBe(200);
    // Bursts of four at a slow upstream until the change has reached the router and one is dropped.
    const dropped = await waitFor(
      async () => {
        for (let index = 0; index < 4; index++)
          fake.enqueue({ json: chatCompletion({ content: 'slow' }), delayMs: 1_000 });
        const answers = await Promise.all(
          Array.from({ length: 4 }, (_, index) =>
            chat({ messages: [{ role: 'user', content: `drop ${index}` }] }),
          ),
        );
        const refused = answers.filter((answer) => answer.status === 503);
        return refused.length > 0 ? refused : undefined;
      },
      { timeoutMs: 5_000, what: 'a request dropped by the provider’s new concurrency' },
    );
    expect(dropped[0]!.body.error.type).toBe('request_dropped');
    const counts = await waitFor(
      async () => {
        const answer = await get(`${gateway.adminUrl}/api/logs/dropped?bucket_ms=60000`, ADMIN);
        return (answer.body.totals?.['provider_queue_full'] ?? 0) >= dropped.length ? answer.body : undefined;
      },
      { timeoutMs: 15_000, what: 'the dropped counts' },
    );
    expect(counts.buckets[0]).toMatchObject({ reason: 'provider_queue_full' });
    expect(counts.bucket_ms).toBe(60_000);
    expect(
      (await network({ concurrency: null, buffer_size: 1_000, drop_excess_requests: false })).status,
    ).toBe(200);
  });
});

describe('request logs (cluster without GW_LOGS_DATABASE_URL)', () => {
  it('are off: /api/logs and the live tail answer 503 naming the variable', {
    timeout: scaled(60_000),
  }, async () => {
    const gateway = await startCluster({ config: {}, adminToken: ADMIN_TOKEN });
    try {
      const answer = await get(`${gateway.adminUrl}/api/logs`, ADMIN);
      expect(answer.status).toBe(503);
      expect(answer.body.error.message).toContain('GW_LOGS_DATABASE_URL');
      const socket = new WebSocket(`${gateway.adminUrl.replace('http', 'ws')}/api/logs/stream`, {
        headers: ADMIN,
      });
      socket.on('error', () => {});
      const [, response] = (await once(socket, 'unexpected-response')) as [unknown, { statusCode: number }];
      expect(response.statusCode).toBe(503);
      socket.terminate();
    } finally {
      await gateway.close();
    }
  });
});
