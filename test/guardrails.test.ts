// Guardrails (issue 15, docs/guardrails.md), in both modes (the cluster with two ingress replicas): rules
// chosen by CEL over request metadata or by `x-gw-guardrail-id`, built-in, Bedrock, Azure and webhook profiles
// against fakes of their real services, 446 blocks that never reach the upstream, 246 redactions the upstream
// sees, reversible placeholders, streamed output checks, timeouts, async rules, MCP tool calls, admin CRUD.
import {
  applyGuardrailAnswer,
  chatCompletion,
  chatStreamEvents,
  type FakeOpenAi,
  type GatewayConfigInput,
  type LaunchedGateway,
  MCP_SERVER_ENTRIES,
  scaled,
  startCluster,
  startEmbedded,
  startFakeAzureContentSafety,
  startFakeBedrock,
  startFakeGuardrailWebhook,
  startFakeOpenAi,
  stdioServer,
  waitFor,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, get, type Json, post, postForText } from './support/http.ts';

const ADMIN_TOKEN = 'guardrails-admin';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const SUPPORT_KEY = 'sk-gw-support000000000000000000000000000000000';
const ENV = {
  GUARD_AWS_SECRET: 'guard-secret',
  GUARD_AZURE_KEY: 'azure-key',
  GUARD_HOOK_SECRET: 'hook-secret',
};

type Fakes = {
  openai: FakeOpenAi;
  bedrock: Awaited<ReturnType<typeof startFakeBedrock>>;
  azure: Awaited<ReturnType<typeof startFakeAzureContentSafety>>;
  hook: Awaited<ReturnType<typeof startFakeGuardrailWebhook>>;
};

function config(fakes: Fakes): GatewayConfigInput {
  const byHeader = (id: string, profiles: Record<string, unknown>) => ({
    id,
    condition: 'false',
    ...profiles,
  });
  return {
    providers: {
      openai: {
        keys: [{ value: 'sk-upstream' }],
        network_config: { base_url: fakes.openai.url, max_retries: 0 },
      },
    },
    governance: {
      teams: [{ id: 'team-support', name: 'support' }],
      virtual_keys: [
        {
          name: 'support',
          value: SUPPORT_KEY,
          team_id: 'team-support',
          provider_configs: [{ provider: 'openai', allowed_models: ['*'] }],
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
        },
      ],
    },
    guardrails: {
      profiles: [
        { id: 'words', type: 'builtin', keywords: ['forbidden plan'] },
        { id: 'pii', type: 'builtin', pii: ['email', 'card', 'phone', 'iban', 'secret'] },
        { id: 'out-words', type: 'builtin', keywords: ['classified'] },
        { id: 'audit-words', type: 'builtin', keywords: ['suspicious'] },
        {
          id: 'bedrock',
          type: 'bedrock',
          region: 'us-east-1',
          guardrail_id: 'gr-test',
          version: '1',
          access_key: 'AKIDGUARD',
          secret_key: 'env.GUARD_AWS_SECRET',
          endpoint: fakes.bedrock.url,
        },
        {
          id: 'azure',
          type: 'azure_content_safety',
          endpoint: fakes.azure.url,
          api_key: 'env.GUARD_AZURE_KEY',
        },
        { id: 'hook', type: 'webhook', url: `${fakes.hook.url}/check`, secret: 'env.GUARD_HOOK_SECRET' },
      ],
      rules: [
        { id: 'block-words', condition: 'request_type != "tool"', input_profiles: ['words'] },
        {
          id: 'support-pii',
          condition: 'virtual_key == "support"',
          action: 'REDACT',
          input_profiles: ['pii'],
        },
        {
          id: 'reversible-pii',
          condition: 'model == "gpt-4o-reversible"',
          action: 'REDACT',
          reversible: true,
          input_profiles: ['pii'],
        },
        {
          id: 'output-window',
          condition: 'model == "gpt-4o-out"',
          output_profiles: ['out-words'],
          stream_window_chars: 16,
        },
        {
          id: 'output-buffer',
          condition: 'model == "gpt-4o-buffered"',
          output_profiles: ['out-words'],
          stream_output: 'buffer',
        },
        { id: 'audit', condition: 'model == "gpt-4o-audit"', mode: 'async', input_profiles: ['audit-words'] },
        byHeader('bedrock-rule', { action: 'REDACT', input_profiles: ['bedrock'] }),
        byHeader('azure-rule', { input_profiles: ['azure'] }),
        byHeader('hook-rule', { action: 'REDACT', input_profiles: ['hook'] }),
        byHeader('slow-block', { timeout_ms: 300, input_profiles: ['hook'] }),
        byHeader('slow-allow', { timeout_ms: 300, on_failure: 'allow', input_profiles: ['hook'] }),
        {
          id: 'tool-echo',
          condition: 'request_type == "tool" && mcp_client == "everything" && tool == "echo"',
          action: 'REDACT',
          input_profiles: ['words'],
          output_profiles: ['pii'],
        },
      ],
    },
  };
}

const MODES = [
  [
    'embedded',
    (input: GatewayConfigInput) => startEmbedded({ config: input, adminToken: ADMIN_TOKEN, env: ENV }),
  ],
  [
    'cluster',
    (input: GatewayConfigInput) =>
      startCluster({
        config: input,
        adminToken: ADMIN_TOKEN,
        env: ENV,
        replicas: { ingress: 2 },
        readyTimeoutMs: 45_000,
      }),
  ],
] as const;

const chat = (content: string, model = 'gpt-4o') => ({
  model: `openai/${model}`,
  messages: [{ role: 'user', content }],
});

describe.each(MODES)('guardrails (%s)', (_mode, start) => {
  let fakes: Fakes;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    fakes = {
      openai: await startFakeOpenAi(),
      bedrock: await startFakeBedrock({
        credentials: { AKIDGUARD: { secretAccessKey: 'guard-secret' } },
        answer: applyGuardrailAnswer,
      }),
      azure: await startFakeAzureContentSafety({ keys: ['azure-key'] }),
      hook: await startFakeGuardrailWebhook({ secret: 'hook-secret' }),
    };
    gateway = await start(config(fakes));
  }, scaled(90_000));
  afterAll(async () => {
    await gateway?.close();
    await Promise.all(Object.values(fakes ?? {}).map((fake) => fake.close()));
  });

  const completions = (body: unknown, headers: Record<string, string> = {}, url = gateway.url) =>
    post(`${url}/v1/chat/completions`, body, { headers });
  const upstreamContent = () => (fakes.openai.last().body as Json).messages[0].content;

  it('answers 446 to a blocked input, with the violation, severity and excerpt, and never calls the upstream', async () => {
    const before = fakes.openai.requests.length;
    const answer = await completions(chat('Tell me the Forbidden Plan now'));
    expect(answer.status).toBe(446);
    expect(answer.body).toMatchObject({
      error: { type: 'guardrail_blocked', code: 'block-words' },
      status_code: 446,
      extra_fields: {
        guardrails: {
          outcome: 'blocked',
          side: 'input',
          severity: 'high',
          violations: [
            {
              rule: 'block-words',
              profile: 'words',
              category: 'keyword',
              location: 'messages[0].content',
              excerpt: 'Forbidden Plan',
            },
          ],
        },
      },
    });
    expect(fakes.openai.requests.length).toBe(before);
  });

  it('checks every text the provider receives, on every route: tools, schemas, history, pass-through, embeddings', async () => {
    const before = fakes.openai.requests.length;
    const tool = (description: string) => [{ type: 'function', function: { name: 'f', description } }];
    const history = [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'c1', type: 'function', function: { name: 'f', arguments: '{"q":"forbidden plan"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'ok' },
    ];
    const provider = { 'x-gw-provider': 'openai' };
    const attempts = {
      'a tool description': completions({ ...chat('hi'), tools: tool('the forbidden plan') }),
      'a response_format schema (two spaces)': completions({
        ...chat('hi'),
        response_format: {
          type: 'json_schema',
          json_schema: { name: 'a', schema: { type: 'object', description: 'forbidden  plan' } },
        },
      }),
      'a prediction (a line break)': completions({
        ...chat('hi'),
        prediction: { type: 'content', content: 'forbidden\nplan' },
      }),
      'tool-call arguments in the history': completions({ model: 'openai/gpt-4o', messages: history }),
      'the content, two spaces apart': completions(chat('the forbidden  plan')),
      '/v1/completions': post(`${gateway.url}/v1/completions`, {
        model: 'gpt-4o',
        prompt: 'the forbidden plan',
      }),
      '/v1/responses with x-gw-provider': post(
        `${gateway.url}/v1/responses`,
        {
          model: 'gpt-4o',
          input: [{ role: 'user', content: [{ type: 'input_text', text: 'forbidden plan' }] }],
        },
        { headers: provider },
      ),
      '/v1/embeddings': post(`${gateway.url}/v1/embeddings`, {
        model: 'openai/text-embedding-3-small',
        input: ['fine', 'forbidden plan'],
      }),
      '/v1/embeddings with x-gw-provider': post(
        `${gateway.url}/v1/embeddings`,
        { model: 'text-embedding-3-small', input: 'forbidden plan' },
        { headers: provider },
      ),
    };
    for (const [what, attempt] of Object.entries(attempts)) {
      const answer = await attempt;
      expect(answer.status, what).toBe(446);
      expect(answer.body.error, what).toMatchObject({ type: 'guardrail_blocked', code: 'block-words' });
    }
    // An upload gw relays unread cannot be checked: refused, naming the rule and why.
    const form = new FormData();
    form.set('purpose', 'batch');
    form.set('file', new Blob(['{"body":{"messages":[{"content":"forbidden plan"}]}}']), 'batch.jsonl');
    const upload = await fetch(`${gateway.url}/v1/files`, { method: 'POST', body: form });
    expect(upload.status).toBe(446);
    expect(((await upload.json()) as Json).error).toMatchObject({
      type: 'guardrail_blocked',
      code: 'block-words',
      message: expect.stringContaining('relayed unread'),
    });
    expect(fakes.openai.requests.length).toBe(before);
    // Clean calls still go through, pass-through included.
    const clean = await post(`${gateway.url}/v1/completions`, { model: 'gpt-4o', prompt: 'a fine plan' });
    expect(clean.status).toBe(200);
    expect(fakes.openai.last().body).toMatchObject({ prompt: 'a fine plan' });
    // A redaction rewrites the pass-through body the provider gets (its length included).
    const redacted = await post(
      `${gateway.url}/v1/completions`,
      { model: 'gpt-4o', prompt: 'Mail jane@example.com', suffix: 'ok' },
      { headers: { 'x-gw-vk': SUPPORT_KEY } },
    );
    expect(redacted.status).toBe(200);
    expect(fakes.openai.last().body).toEqual({
      model: 'gpt-4o',
      prompt: 'Mail [REDACTED_EMAIL]',
      suffix: 'ok',
    });
    expect(fakes.openai.last().headers['content-length']).toBe(
      String(Buffer.byteLength(JSON.stringify(fakes.openai.last().body))),
    );
  });

  it('redacts PII for the key its condition names before the upstream sees it, and answers 246 with counts', async () => {
    const text = 'Mail jane@example.com, card 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00.';
    const answer = await completions(chat(text), { authorization: `Bearer ${SUPPORT_KEY}` });
    expect(answer.status).toBe(246);
    expect(upstreamContent()).toBe('Mail [REDACTED_EMAIL], card [REDACTED_CARD], IBAN [REDACTED_IBAN].');
    expect(answer.body.choices[0].message.content).toBe('Hello from the fake upstream');
    expect(answer.body.extra_fields.processing_time_ms).toEqual(expect.any(Number));
    expect(answer.body.extra_fields.guardrails).toMatchObject({
      outcome: 'warning',
      redactions: { email: 1, card: 1, iban: 1 },
      modifications: expect.arrayContaining([
        expect.objectContaining({ rule: 'support-pii', category: 'card', replacement: '[REDACTED_CARD]' }),
      ]),
      processing_time_ms: expect.any(Number),
    });
    // Without the key the condition does not hold: the text goes as it was.
    expect((await completions(chat(text))).status).toBe(200);
    expect(upstreamContent()).toBe(text);
  });

  it('puts reversibly redacted values back in the answer', async () => {
    fakes.openai.enqueue({ json: chatCompletion({ content: 'I wrote to [EMAIL_1] and [EMAIL_2].' }) });
    const answer = await completions(
      chat('Write to ann@example.com and bob@example.org', 'gpt-4o-reversible'),
    );
    expect(upstreamContent()).toBe('Write to [EMAIL_1] and [EMAIL_2]');
    expect(answer.status).toBe(246);
    expect(answer.body.choices[0].message.content).toBe('I wrote to ann@example.com and bob@example.org.');
    expect(answer.body.extra_fields.guardrails).toMatchObject({ reversible: true, redactions: { email: 2 } });
  });

  it('checks a whole answer and blocks it', async () => {
    fakes.openai.enqueue({ json: chatCompletion({ content: 'That is classified.' }) });
    const answer = await completions(chat('What is it?', 'gpt-4o-out'));
    expect(answer.status).toBe(446);
    expect(answer.body.extra_fields.guardrails).toMatchObject({
      side: 'output',
      violations: [{ category: 'keyword' }],
    });
  });

  it('checks a streamed answer per window, and ends it with an error event at the window that violates', async () => {
    const pieces = ['The answer ', 'is fine so far. ', 'But it is classi', 'fied indeed.'];
    fakes.openai.enqueue({ events: chatStreamEvents({ pieces }) });
    const answer = await postForText(`${gateway.url}/v1/chat/completions`, {
      ...chat('go', 'gpt-4o-out'),
      stream: true,
    });
    expect(answer.status).toBe(200);
    expect(answer.text).toContain('is fine so far.');
    expect(answer.text).not.toContain('fied indeed');
    expect(answer.text).toContain('guardrail_blocked');
    expect(answer.text).not.toContain('[DONE]');
  });

  it('holds a buffered stream and answers a plain 446 when it is blocked', async () => {
    fakes.openai.enqueue({ events: chatStreamEvents({ pieces: ['All ', 'classified.'] }) });
    const blocked = await postForText(`${gateway.url}/v1/chat/completions`, {
      ...chat('go', 'gpt-4o-buffered'),
      stream: true,
    });
    expect(blocked.status).toBe(446);
    expect(blocked.body.error.type).toBe('guardrail_blocked');
    const passed = await postForText(`${gateway.url}/v1/chat/completions`, {
      ...chat('go', 'gpt-4o-buffered'),
      stream: true,
    });
    expect(passed.status).toBe(200);
    expect(passed.text).toContain('wörld');
    expect(passed.text).toContain('[DONE]');
  });

  it('applies a rule named by x-gw-guardrail-id, and refuses an unknown name', async () => {
    const bedrock = { 'x-gw-guardrail-id': 'bedrock-rule' };
    const masked = await completions(chat('reach me at carl@example.com'), bedrock);
    expect(masked.status).toBe(246);
    expect(upstreamContent()).toBe('reach me at {EMAIL}');
    expect(fakes.bedrock.requests.at(-1)?.auth).toMatchObject({ kind: 'sigv4', accessKeyId: 'AKIDGUARD' });
    const blocked = await completions(chat('the FORBIDDEN topic'), bedrock);
    expect(blocked.status).toBe(446);
    expect(blocked.body.extra_fields.guardrails.violations[0]).toMatchObject({
      profile: 'bedrock',
      category: 'VIOLENCE',
      severity: 'high',
    });
    const unknown = await completions(chat('hi'), { 'x-gw-guardrail-id': 'nope' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.param).toBe('x-gw-guardrail-id');
  });

  it('uses Azure Content Safety and a signed webhook as profiles', async () => {
    const azure = await completions(chat('a FORBIDDEN act'), { 'x-gw-guardrail-id': 'azure-rule' });
    expect(azure.status).toBe(446);
    expect(azure.body.extra_fields.guardrails.violations[0]).toMatchObject({
      profile: 'azure',
      category: 'Violence',
    });
    expect(fakes.azure.last().headers['ocp-apim-subscription-key']).toBe('azure-key');
    expect((await completions(chat('a calm text'), { 'x-gw-guardrail-id': 'azure-rule' })).status).toBe(200);
    const hooked = await completions(chat('mail dee@example.com'), { 'x-gw-guardrail-id': 'hook-rule' });
    expect(hooked.status).toBe(246);
    expect(upstreamContent()).toBe('mail <email>');
  });

  it('blocks on a webhook violation whose text is the offending text (the documented shape), or its index', async () => {
    const before = fakes.openai.requests.length;
    const documented = await completions(chat('a BANNED word'), { 'x-gw-guardrail-id': 'hook-rule' });
    expect(documented.status, JSON.stringify(documented.body)).toBe(446);
    expect(documented.body.extra_fields.guardrails.violations[0]).toMatchObject({
      profile: 'hook',
      category: 'banned_word',
      severity: 'high',
      excerpt: 'BANNED',
    });
    const indexed = await completions(chat('a FORBIDDEN word'), { 'x-gw-guardrail-id': 'hook-rule' });
    expect(indexed.status).toBe(446);
    expect(indexed.body.extra_fields.guardrails.violations[0]).toMatchObject({ category: 'forbidden_topic' });
    expect(fakes.openai.requests.length).toBe(before);
  });

  it('blocks when a check times out, or lets the request go on when the rule says so', async () => {
    const before = fakes.openai.requests.length;
    const started = performance.now();
    const blocked = await completions(chat('a SLOW one'), { 'x-gw-guardrail-id': 'slow-block' });
    expect(blocked.status).toBe(446);
    expect(blocked.body.extra_fields.guardrails.violations[0]).toMatchObject({ category: 'timeout' });
    expect(performance.now() - started).toBeLessThan(2_500);
    expect(fakes.openai.requests.length).toBe(before);
    const allowed = await completions(chat('a SLOW one'), { 'x-gw-guardrail-id': 'slow-allow' });
    expect(allowed.status).toBe(200);
    expect(allowed.body.extra_fields.guardrails.rules).toContainEqual(
      expect.objectContaining({
        rule: 'slow-allow',
        outcome: 'error',
      }),
    );
  });

  it('never blocks nor delays with an async rule, and counts what it flagged', async () => {
    const answer = await completions(chat('a suspicious request', 'gpt-4o-audit'));
    expect(answer.status).toBe(200);
    expect(upstreamContent()).toBe('a suspicious request');
    await waitFor(
      async () =>
        (await (await fetch(`${gateway.url}/metrics`)).text()).includes(
          'gw_guardrail_outcomes_total{rule="audit",outcome="flagged"',
        ),
      { timeoutMs: 5_000, what: 'the async outcome counted' },
    );
  });

  it('checks MCP tool calls with the tool in the condition: arguments in, the answer out', async () => {
    const execute = (message: string) =>
      post(`${gateway.url}/v1/mcp/tool/execute`, {
        type: 'function',
        id: 'call-1',
        function: { name: 'everything-echo', arguments: JSON.stringify({ message }) },
      });
    await waitFor(async () => (await execute('hi')).status === 200, {
      timeoutMs: 20_000,
      what: 'the MCP client connected',
    });
    const blocked = await execute('the forbidden plan');
    expect(blocked.status).toBe(446);
    expect(blocked.body.extra_fields.guardrails.violations[0]).toMatchObject({
      rule: 'tool-echo',
      location: 'function.arguments',
    });
    const redacted = await execute('write to eve@example.com');
    expect(redacted.status).toBe(246);
    expect(redacted.body).toMatchObject({
      role: 'tool',
      content: 'Echo: write to [REDACTED_EMAIL]',
      tool_call_id: 'call-1',
    });
  });

  it('manages profiles and rules through the admin API, refuses a bad CEL, and every ingress applies a change', async () => {
    const provider = await call(
      'POST',
      `${gateway.adminUrl}/api/enterprise/guardrails/providers`,
      {
        provider_name: 'bedrock',
        policy_name: 'spec-form',
        enabled: true,
        config: {
          guardrail_arn: 'arn:aws:bedrock:us-east-1:123456789012:guardrail/abc',
          guardrail_version: '2',
          region: 'us-east-1',
          secret_key: 'very-secret-value-123',
        },
      },
      ADMIN,
    );
    expect(provider.status).toBe(201);
    expect(provider.body).toMatchObject({
      id: 'spec-form',
      type: 'bedrock',
      version: '2',
      guardrail_id: expect.stringContaining('guardrail/abc'),
    });
    expect(JSON.stringify(provider.body)).not.toContain('very-secret-value-123');
    const badArn = await call(
      'POST',
      `${gateway.adminUrl}/api/enterprise/guardrails/providers`,
      { provider_name: 'bedrock', policy_name: 'x', config: { region: 'us-east-1' } },
      ADMIN,
    );
    expect(badArn.status).toBe(400);
    expect(badArn.body.error.message).toContain('config.guardrail_arn');

    const profile = await call(
      'POST',
      `${gateway.adminUrl}/api/guardrails/profiles`,
      { id: 'api-words', type: 'builtin', keywords: ['zebra'] },
      ADMIN,
    );
    expect(profile.status).toBe(201);
    const badCel = await call(
      'POST',
      `${gateway.adminUrl}/api/guardrails/rules`,
      { id: 'bad', condition: 'model ==', input_profiles: ['api-words'] },
      ADMIN,
    );
    expect(badCel.status).toBe(400);
    expect(badCel.body.error.message).toContain('condition');
    const missing = await call(
      'POST',
      `${gateway.adminUrl}/api/guardrails/rules`,
      { id: 'bad', input_profiles: ['nope'] },
      ADMIN,
    );
    expect(missing.status).toBe(400);
    const rule = await call(
      'POST',
      `${gateway.adminUrl}/api/guardrails/rules`,
      { id: 'api-rule', condition: 'team == "team-support"', input_profiles: ['api-words'] },
      ADMIN,
    );
    expect(rule.status).toBe(201);
    expect((await get(`${gateway.adminUrl}/api/guardrails/rules/api-rule`, ADMIN)).body).toMatchObject({
      id: 'api-rule',
      action: 'BLOCK',
    });
    expect((await get(`${gateway.adminUrl}/api/guardrails/rules`)).status).toBe(401);

    const zebra = (url: string) =>
      completions(chat('a zebra'), { authorization: `Bearer ${SUPPORT_KEY}` }, url);
    await waitFor(
      async () => (await Promise.all(gateway.urls.map(zebra))).every((answer) => answer.status === 446),
      {
        timeoutMs: 5_000,
        what: 'every ingress applying the new rule',
      },
    );
    expect((await completions(chat('a zebra'))).status).toBe(200);

    expect(
      (await call('DELETE', `${gateway.adminUrl}/api/guardrails/profiles/api-words`, undefined, ADMIN))
        .status,
    ).toBe(409);
    const edited = await call(
      'PUT',
      `${gateway.adminUrl}/api/guardrails/rules/api-rule`,
      { condition: 'false', input_profiles: ['api-words'] },
      ADMIN,
    );
    expect(edited.status).toBe(200);
    await waitFor(
      async () => (await Promise.all(gateway.urls.map(zebra))).every((answer) => answer.status === 200),
      {
        timeoutMs: 5_000,
        what: 'every ingress applying the edit',
      },
    );
    expect(
      (await call('DELETE', `${gateway.adminUrl}/api/guardrails/rules/api-rule`, undefined, ADMIN)).status,
    ).toBe(200);
    expect(
      (await call('DELETE', `${gateway.adminUrl}/api/guardrails/profiles/api-words`, undefined, ADMIN))
        .status,
    ).toBe(200);
    expect((await get(`${gateway.adminUrl}/api/guardrails/rules/api-rule`, ADMIN)).status).toBe(404);
  });
});
