// Routing rules and strategies (issue 40), in both modes (the cluster with two ingress and two router
// replicas): a rule of the config file or the admin API decides where a request goes, first match by scope and
// priority, within the virtual key's boundary; every decision is on the answer (`x-gw-routing-rule`) and in
// the request log; a rule that fails never breaks traffic; a dry run explains a request without serving it;
// lowest_latency follows what the routers measured.
import {
  chatCompletion,
  type FakeUpstream,
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startEmbedded,
  startFakeAnthropic,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { startClusterWithLogs } from '@gw/testkit/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, get, post } from './support/http.ts';

const ADMIN_TOKEN = 'routing-admin';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const KEY = 'sk-gw-routing0000000000000000000000000000000000';
const LIMITED = 'sk-gw-routing1111111111111111111111111111111111';

const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    // A cluster's request logs are written to PostgreSQL by the admin's log worker.
    (config: GatewayConfigInput) =>
      startClusterWithLogs({
        config,
        adminToken: ADMIN_TOKEN,
        replicas: { ingress: 2, router: 2 },
      }),
  ],
] as const;

interface Decision {
  rule: { id: string; name: string; scope: string } | null;
  strategy: string;
  candidates: Array<{ provider: string; model: string; score?: number; skipped?: string; detail?: string }>;
  skipped_rules: Array<{ id: string; name: string; reason: string; error?: string }>;
}

describe.each(MODES)('routing rules (%s)', (_mode, start) => {
  let openai: FakeUpstream;
  let groq: FakeUpstream;
  let anthropic: FakeUpstream;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    [openai, groq, anthropic] = await Promise.all([
      startFakeOpenAi(),
      startFakeOpenAi(),
      startFakeAnthropic(),
    ]);
    const network = (url: string) => ({ base_url: url, max_retries: 0 });
    gateway = await start({
      client: { enforce_virtual_keys: true },
      logs: { enabled: true },
      load_balancer: { recompute_interval_ms: 200, bucket_ms: 100, window_ms: 5_000 },
      providers: {
        openai: { keys: [{ value: 'sk-openai' }], network_config: network(openai.url) },
        groq: { keys: [{ value: 'sk-groq' }], network_config: network(groq.url) },
        anthropic: { keys: [{ value: 'sk-ant' }], network_config: network(anthropic.url) },
      },
      governance: {
        virtual_keys: [
          {
            id: 'vk-routing',
            name: 'routing',
            value: KEY,
            provider_configs: [{ provider: 'openai' }, { provider: 'groq' }, { provider: 'anthropic' }],
          },
          { id: 'vk-limited', name: 'limited', value: LIMITED, provider_configs: [{ provider: 'openai' }] },
        ],
        pricing: { 'small-window': { input: 1, output: 1, context_window: 1_000 } },
        routing_rules: [
          {
            id: 'gold-tier',
            name: 'gold-tier',
            cel_expression: '"x-tier" in headers && headers["x-tier"] == "gold"',
            targets: [{ provider: 'anthropic', model: 'claude-sonnet-4-5' }],
          },
        ],
      },
    });
  }, scaled(90_000));
  afterAll(async () => {
    await gateway?.close();
    await Promise.all([openai?.close(), groq?.close(), anthropic?.close()]);
  });

  const chat = (key: string, headers: Record<string, string> = {}, url = gateway.url) =>
    post(
      `${url}/v1/chat/completions`,
      { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'route me' }] },
      { headers: { authorization: `Bearer ${key}`, ...headers } },
    );
  const decisionOf = (id: string) =>
    waitFor(
      async () => {
        const answer = await get(`${gateway.adminUrl}/api/logs/${id}`, ADMIN);
        return answer.status === 200 ? (answer.body as { routing?: Decision }) : undefined;
      },
      { timeoutMs: 15_000, what: `the log record of ${id}` },
    ).then((record) => record.routing);
  const rules = () => `${gateway.adminUrl}/api/governance/routing-rules`;

  it('sends a request a config-file rule matches to its target, says so on the answer and in the log', async () => {
    const before = openai.requests.length;
    const answer = await chat(KEY, { 'x-tier': 'gold' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-gw-routing-rule')).toBe('gold-tier');
    expect(anthropic.last().body).toMatchObject({ model: 'claude-sonnet-4-5' });
    expect(openai.requests.length).toBe(before);
    const decision = await decisionOf(answer.headers.get('x-request-id')!);
    expect(decision).toMatchObject({
      rule: { id: 'gold-tier', name: 'gold-tier', scope: 'global' },
      strategy: 'weighted',
      candidates: [{ provider: 'anthropic', model: 'claude-sonnet-4-5', score: 1, state: 'healthy' }],
    });
    const found = await get(`${gateway.adminUrl}/api/logs?routing_rule=gold-tier`, ADMIN);
    expect((found.body as { records: Array<{ id: string }> }).records.map((record) => record.id)).toContain(
      answer.headers.get('x-request-id'),
    );

    const plain = await chat(KEY);
    expect(plain.headers.get('x-gw-routing-rule')).toBeNull();
    expect(openai.last().body).toMatchObject({ model: 'gpt-4o-mini' });
    expect(await decisionOf(plain.headers.get('x-request-id')!)).toMatchObject({ rule: null });
  });

  it('applies a rule made through the admin API to the next request on every replica, and its removal too', async () => {
    const created = await call(
      'POST',
      `${gateway.adminUrl}/api/governance/routing-rules`,
      {
        name: 'key-to-groq',
        cel_expression: '"x-route" in headers',
        scope: 'virtual_key',
        scope_id: 'vk-routing',
        targets: [{ provider: 'groq', model: 'llama-3.3-70b' }],
      },
      ADMIN,
    );
    expect(created.status).toBe(201);
    const id = (created.body as { id: string }).id;
    for (const url of gateway.urls) {
      // A replica follows the change notice: the next request after it sees the rule.
      await waitFor(
        async () =>
          (await chat(KEY, { 'x-route': '1' }, url)).headers.get('x-gw-routing-rule') === 'key-to-groq',
        { timeoutMs: 10_000, what: `the new rule on ${url}` },
      );
      expect(groq.last().body).toMatchObject({ model: 'llama-3.3-70b' });
      // A more specific scope wins over the global gold rule.
      expect(
        (await chat(KEY, { 'x-route': '1', 'x-tier': 'gold' }, url)).headers.get('x-gw-routing-rule'),
      ).toBe('key-to-groq');
    }
    expect(
      (await call('DELETE', `${gateway.adminUrl}/api/governance/routing-rules/${id}`, undefined, ADMIN))
        .status,
    ).toBe(200);
    for (const url of gateway.urls) {
      await waitFor(
        async () => (await chat(KEY, { 'x-route': '1' }, url)).headers.get('x-gw-routing-rule') === null,
        {
          timeoutMs: 10_000,
          what: `the rule gone on ${url}`,
        },
      );
    }
  });

  it('never routes around the key: a rule whose targets the key does not allow is skipped, with the reason', async () => {
    const answer = await chat(LIMITED, { 'x-tier': 'gold' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-gw-routing-rule')).toBeNull();
    expect(openai.last().body).toMatchObject({ model: 'gpt-4o-mini' });
    expect(await decisionOf(answer.headers.get('x-request-id')!)).toMatchObject({
      rule: null,
      skipped_rules: [{ id: 'gold-tier', name: 'gold-tier', reason: 'boundary' }],
    });
  });

  it('refuses a rule that does not compile, with its position; one that fails at a request never breaks it', async () => {
    const refused = await call(
      'POST',
      `${gateway.adminUrl}/api/governance/routing-rules`,
      { name: 'broken', cel_expression: 'headers["a"] ==', targets: [{ provider: 'groq', model: 'x' }] },
      ADMIN,
    );
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      error: {
        type: 'invalid_request',
        param: 'cel_expression',
        message: expect.stringMatching(/\(line 1, column \d+\)$/),
      },
    });
    const failing = await call(
      'POST',
      `${gateway.adminUrl}/api/governance/routing-rules`,
      {
        name: 'fails',
        cel_expression: 'headers["x-absent"] == "1"',
        priority: 0,
        targets: [{ provider: 'groq', model: 'x' }],
      },
      ADMIN,
    );
    expect(failing.status).toBe(201);
    try {
      await waitFor(
        async () => {
          const answer = await chat(KEY);
          expect(answer.status).toBe(200);
          const decision = await decisionOf(answer.headers.get('x-request-id')!);
          return decision?.skipped_rules.some((rule) => rule.name === 'fails' && rule.reason === 'error');
        },
        { timeoutMs: 15_000, what: 'a request past the failing rule' },
      );
    } finally {
      await call('DELETE', `${rules()}/${(failing.body as { id: string }).id}`, undefined, ADMIN);
    }
  });

  it('dry-runs a request against the rules without serving it', async () => {
    const before = anthropic.requests.length;
    const answer = await call(
      'POST',
      `${gateway.adminUrl}/api/governance/routing-rules/dry-run`,
      { model: 'openai/gpt-4o-mini', virtual_key_id: 'vk-routing', headers: { 'x-tier': 'gold' } },
      ADMIN,
    );
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      decision: { rule: { id: 'gold-tier' }, strategy: 'weighted' },
      targets: [{ provider: 'anthropic', model: 'claude-sonnet-4-5' }],
    });
    expect(anthropic.requests.length).toBe(before);
    const limited = await call(
      'POST',
      `${gateway.adminUrl}/api/governance/routing-rules/dry-run`,
      { model: 'openai/gpt-4o-mini', virtual_key_id: 'vk-limited', headers: { 'x-tier': 'gold' } },
      ADMIN,
    );
    expect(limited.body).toMatchObject({ decision: { rule: null, skipped_rules: [{ reason: 'boundary' }] } });
  });

  it('least_busy: calls in flight on the routers steer the next request on every ingress (governance sees them too)', async () => {
    const created = await call(
      'POST',
      `${gateway.adminUrl}/api/governance/routing-rules`,
      {
        name: 'least-busy',
        cel_expression: '"x-busy" in headers',
        strategy: 'least_busy',
        targets: [
          { provider: 'groq', model: 'busy-model' },
          { provider: 'openai', model: 'gpt-4o-mini' },
        ],
      },
      ADMIN,
    );
    const pin = await call(
      'POST',
      `${gateway.adminUrl}/api/governance/routing-rules`,
      {
        name: 'pin-groq',
        cel_expression: '"x-pin" in headers',
        targets: [{ provider: 'groq', model: 'busy-model' }],
      },
      ADMIN,
    );
    const ids = [created, pin].map((answer) => (answer.body as { id: string }).id);
    const release = new AbortController();
    try {
      // Three calls the upstream holds (its own slowness), all through the first ingress.
      for (let index = 0; index < 3; index++) groq.enqueue({ json: chatCompletion(), delayMs: 20_000 });
      const held = Array.from({ length: 3 }, () =>
        fetch(`${gateway.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}`, 'x-pin': '1' },
          body: JSON.stringify({
            model: 'openai/gpt-4o-mini',
            messages: [{ role: 'user', content: 'hold' }],
          }),
          signal: release.signal,
        }).catch(() => undefined),
      );
      // Governance (the dry run) and every ingress see them once a recompute shared them.
      await waitFor(
        async () => {
          const dry = await call(
            'POST',
            `${gateway.adminUrl}/api/governance/routing-rules/dry-run`,
            { model: 'openai/gpt-4o-mini', virtual_key_id: 'vk-routing', headers: { 'x-busy': '1' } },
            ADMIN,
          );
          const candidates = (dry.body as { decision: Decision }).decision.candidates;
          return candidates.find((candidate) => candidate.provider === 'groq')?.detail === '3 in flight';
        },
        { timeoutMs: 15_000, what: 'three calls in flight seen by governance' },
      );
      // The other ingress follows within its own recompute: its next requests go to the idle target.
      const url = gateway.urls.at(-1)!;
      const seen = await waitFor(
        async () => {
          const answer = await chat(KEY, { 'x-busy': '1' }, url);
          const decision = await decisionOf(answer.headers.get('x-request-id')!);
          const groqSeen = decision?.candidates.find((candidate) => candidate.provider === 'groq');
          return groqSeen?.detail === '3 in flight' ? { answer, decision: decision! } : undefined;
        },
        { timeoutMs: 15_000, what: 'the three calls in flight seen by the other ingress' },
      );
      expect(seen.answer.headers.get('x-gw-routing-rule')).toBe('least-busy');
      expect(seen.decision.candidates.map((candidate) => candidate.provider)).toEqual(['openai', 'groq']);
      const served = openai.requests.length;
      await chat(KEY, { 'x-busy': '1' }, url);
      expect(openai.requests.length).toBe(served + 1);
      release.abort();
      await Promise.all(held);
    } finally {
      release.abort();
      for (const id of ids) await call('DELETE', `${rules()}/${id}`, undefined, ADMIN);
    }
  });

  it('skips a model whose context window is smaller than the prompt, and refuses one no target can take', async () => {
    const created = await call(
      'POST',
      `${gateway.adminUrl}/api/governance/routing-rules`,
      {
        name: 'sized',
        cel_expression: '"x-sized" in headers',
        targets: [{ provider: 'openai', model: 'small-window' }],
        fallbacks: ['anthropic/claude-sonnet-4-5'],
      },
      ADMIN,
    );
    try {
      const long = 'word '.repeat(2_000);
      const answer = await post(
        `${gateway.url}/v1/chat/completions`,
        { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: long }] },
        { headers: { authorization: `Bearer ${KEY}`, 'x-sized': '1' } },
      );
      expect(answer.status).toBe(200);
      expect(anthropic.last().body).toMatchObject({ model: 'claude-sonnet-4-5' });
      const decision = await decisionOf(answer.headers.get('x-request-id')!);
      expect(decision?.candidates[0]).toMatchObject({ model: 'small-window', skipped: 'context_window' });
      const refused = await post(
        `${gateway.url}/v1/chat/completions`,
        { model: 'openai/small-window', messages: [{ role: 'user', content: long }] },
        { headers: { authorization: `Bearer ${KEY}` } },
      );
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({
        error: { type: 'invalid_request', code: 'context_length_exceeded' },
      });
    } finally {
      await call('DELETE', `${rules()}/${(created.body as { id: string }).id}`, undefined, ADMIN);
    }
  });

  it('lowest_latency: once the routers measured both targets, the faster one serves', async () => {
    // Groq's fake answers slowly (its own slowness: the signal under test, not a wait).
    for (let index = 0; index < 200; index++)
      groq.enqueue({ json: chatCompletion({ model: 'slow' }), delayMs: 150 });
    const created = await call(
      'POST',
      `${gateway.adminUrl}/api/governance/routing-rules`,
      {
        name: 'fastest',
        cel_expression: '"x-fastest" in headers',
        strategy: 'lowest_latency',
        targets: [
          { provider: 'groq', model: 'slow-model' },
          { provider: 'openai', model: 'gpt-4o-mini' },
        ],
      },
      ADMIN,
    );
    expect(created.status).toBe(201);
    try {
      // Until both are measured and shared, the unmeasured one is tried first; then the fast one leads.
      const decision = await waitFor(
        async () => {
          const answer = await chat(KEY, { 'x-fastest': '1' });
          const seen = await decisionOf(answer.headers.get('x-request-id')!);
          const scored = seen?.candidates.filter((candidate) => candidate.score !== undefined) ?? [];
          return scored.length === 2 ? seen : undefined;
        },
        { timeoutMs: 30_000, what: 'both targets measured' },
      );
      expect(decision?.candidates[0]).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini' });
      const before = groq.requests.length;
      for (let index = 0; index < 5; index++)
        expect((await chat(KEY, { 'x-fastest': '1' })).status).toBe(200);
      expect(groq.requests.length).toBe(before);
    } finally {
      await call('DELETE', `${rules()}/${(created.body as { id: string }).id}`, undefined, ADMIN);
    }
  });
});
