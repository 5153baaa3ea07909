// Alerts through the real gateway, in both modes (the cluster evaluates in its admin process, behind the Redis
// lease): budget thresholds of a virtual key fire once each at 50/80/100 % as it spends, and a provider whose
// upstream starts failing alerts when its health degrades and resolves when it recovers. Deliveries go to a
// webhook receiver that checks the signature.
import {
  chatCompletion,
  type FakeUpstream,
  type GatewayConfigInput,
  type LaunchedGateway,
  pauseForNegativeCheck,
  scaled,
  startCluster,
  startEmbedded,
  startFakeUpstream,
  startFakeWebhookReceiver,
  waitFor,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, get, post } from './support/http.ts';

const ADMIN_TOKEN = 'alerts-admin';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const SECRET = 'alerts-webhook-secret-01';
const BUDGET_KEY = 'sk-gw-alertsbudget00000000000000000000000000000000';
const HEALTH_KEY = 'sk-gw-alertshealth00000000000000000000000000000000';

const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config, adminToken: ADMIN_TOKEN })],
  ['cluster', (config: GatewayConfigInput) => startCluster({ config, adminToken: ADMIN_TOKEN })],
] as const;

interface Delivery {
  action: string;
  rule_id: string;
  subject: string;
  details: Record<string, unknown>;
}

/** What the webhook receiver got for a rule, signed (every delivery gw sends is). */
const signedDeliveries = (receiver: FakeUpstream, rule: string) =>
  receiver.requests
    .filter((request) => request.headers['x-gw-signature'])
    .map((request) => request.body as Delivery)
    .filter((delivery) => delivery.rule_id === rule);

describe.each(MODES)('alerts (%s)', (_mode, start) => {
  const dial = { failing: false };
  let upstream: FakeUpstream;
  let receiver: FakeUpstream;
  let gateway: LaunchedGateway;
  const deliveries = (rule: string) => signedDeliveries(receiver, rule);

  beforeAll(async () => {
    receiver = await startFakeWebhookReceiver(SECRET);
    upstream = await startFakeUpstream([
      {
        method: 'POST',
        path: /\/chat\/completions$/,
        answer: (request) =>
          dial.failing && String(request.headers.authorization).endsWith('sk-mistral')
            ? { status: 500, json: { error: { message: 'upstream broke', type: 'server_error' } } }
            : { json: chatCompletion() },
      },
    ]);
    const network = { base_url: upstream.url, max_retries: 0 };
    gateway = await start({
      providers: {
        openai: { keys: [{ value: 'sk-openai' }], network_config: network },
        mistral: { keys: [{ value: 'sk-mistral' }], network_config: network },
      },
      governance: {
        // The fake answers 18 tokens; at $1,000 per million tokens a request costs $0.018, 10 % of the budget.
        pricing: { 'gpt-4o-mini': { input: 1000, output: 1000 } },
        virtual_keys: [
          {
            id: 'vk-budget',
            name: 'budgeted',
            value: BUDGET_KEY,
            provider_configs: [{ provider: 'openai', allowed_models: ['*'] }],
            budgets: [{ max_limit: 0.18, reset_duration: '1d' }],
          },
          {
            id: 'vk-health',
            name: 'health',
            value: HEALTH_KEY,
            provider_configs: [{ provider: 'mistral', allowed_models: ['*'] }],
          },
        ],
      },
      load_balancer: {
        recompute_interval_ms: 200,
        window_ms: 20_000,
        bucket_ms: 500,
        min_samples: 10,
        probe_interval_ms: 500,
        recovery_ms: 1_000,
      },
      alerts: { evaluation_interval_ms: 1_000, lease_ms: 3_000 },
    });
    const channel = await post(
      `${gateway.adminUrl}/api/alerts/channels`,
      { id: 'hook', type: 'webhook', url: `${receiver.url}/gw`, secret: SECRET },
      { headers: ADMIN },
    );
    expect(channel.status).toBe(201);
  }, scaled(90_000));
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await receiver?.close();
  });

  const chat = (key: string, model: string) =>
    post(
      `${gateway.url}/v1/chat/completions`,
      // A small max_tokens keeps the reservation of a request close to its cost.
      { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 },
      { headers: { authorization: `Bearer ${key}` } },
    );
  const spent = async () => {
    const usage = await get(`${gateway.adminUrl}/api/governance/virtual-keys/vk-budget/usage`, ADMIN);
    return usage.body.usage[0].entries[0].used as number;
  };
  /** One request at a time, each settled before the next (a cluster settles off the response's path). */
  const spend = async (requests: number, until: number) => {
    for (let index = 0; index < requests; index++) {
      const before = await spent();
      expect((await chat(BUDGET_KEY, 'gpt-4o-mini')).status).toBe(200);
      await waitFor(async () => (await spent()) > before, { what: 'the settle' });
    }
    // The key's use counts a settle within about a second of it, when the slice that admitted it is renewed
    // (docs/governance.md "What the reports show"), and may read a slice taken but not yet reported until then.
    await waitFor(async () => (await spent()) >= until - 1e-9, { timeoutMs: 10_000, what: `spent ${until}` });
  };

  it('a virtual key spending its budget alerts once at 50, 80 and 100 %', {
    timeout: scaled(60_000),
  }, async () => {
    const rule = await post(
      `${gateway.adminUrl}/api/alerts/rules`,
      {
        id: 'budgets',
        kind: 'budget_threshold',
        channels: ['hook'],
        levels: ['virtual_key'],
        severity: 'critical',
      },
      { headers: ADMIN },
    );
    expect(rule.status).toBe(201);
    const thresholds = () => deliveries('budgets').map((delivery) => delivery.details['threshold_percent']);

    await spend(4, 0.072); // 40 %: nothing yet
    await spend(2, 0.108); // 60 %
    await waitFor(() => thresholds().length === 1, { timeoutMs: 10_000, what: 'the 50 % alert' });
    await spend(1, 0.126); // 70 %: still only 50 %
    await spend(2, 0.162); // 90 %
    await waitFor(() => thresholds().length === 2, { timeoutMs: 10_000, what: 'the 80 % alert' });
    await spend(1, 0.18); // 100 %, and a burst the budget refuses
    const refused = await Promise.all(Array.from({ length: 5 }, () => chat(BUDGET_KEY, 'gpt-4o-mini')));
    expect(refused.map((answer) => answer.status)).toEqual([402, 402, 402, 402, 402]);
    await waitFor(() => thresholds().length === 3, { timeoutMs: 10_000, what: 'the 100 % alert' });
    // Negative check: two more evaluations (one a second) send nothing more.
    await pauseForNegativeCheck(2_000);
    expect(thresholds()).toEqual([50, 80, 100]);
    expect(deliveries('budgets')[2]).toMatchObject({
      action: 'trigger',
      subject: 'virtual_key:vk-budget:' + deliveries('budgets')[2]!.details['budget_id'],
      details: { level: 'virtual_key', owner_id: 'vk-budget', max_limit: 0.18 },
    });
    const history = await get(`${gateway.adminUrl}/api/alerts/history?limit=10`, ADMIN);
    expect(history.status).toBe(200);
    const sent = history.body.entries.filter((entry: { rule_id: string }) => entry.rule_id === 'budgets');
    expect(sent.map((entry: { outcome: string }) => entry.outcome)).toEqual(['sent', 'sent', 'sent']);
  });

  it('a provider whose upstream starts failing alerts, and resolves once it recovers', {
    timeout: scaled(60_000),
  }, async () => {
    const rule = await call(
      'POST',
      `${gateway.adminUrl}/api/alerts/rules`,
      { id: 'health', kind: 'provider_health', channels: ['hook'], providers: ['mistral'] },
      ADMIN,
    );
    expect(rule.status).toBe(201);
    for (let index = 0; index < 20; index++) await chat(HEALTH_KEY, 'mistral-small');
    // Negative check: two evaluations of a healthy provider send nothing.
    await pauseForNegativeCheck(2_000);
    expect(deliveries('health')).toEqual([]);

    dial.failing = true;
    await waitFor(
      async () => {
        await chat(HEALTH_KEY, 'mistral-small');
        return deliveries('health').length > 0;
      },
      { timeoutMs: 20_000, intervalMs: 50, what: 'the health alert' },
    );
    expect(deliveries('health')[0]).toMatchObject({ action: 'trigger', subject: 'mistral' });
    expect(['degraded', 'failed']).toContain(deliveries('health')[0]!.details['state']);

    dial.failing = false;
    await waitFor(
      async () => {
        await chat(HEALTH_KEY, 'mistral-small');
        return deliveries('health').some((delivery) => delivery.action === 'resolve');
      },
      { timeoutMs: 30_000, intervalMs: 50, what: 'the resolve' },
    );
    const actions = deliveries('health').map((delivery) => delivery.action);
    expect(actions.filter((action) => action === 'trigger')).toHaveLength(1);
    expect(actions.at(-1)).toBe('resolve');
  });

  it('answers 400 naming the field through HTTP, and redacts the channel secret', async () => {
    const bad = await post(
      `${gateway.adminUrl}/api/alerts/rules`,
      { id: 'bad', kind: 'error_rate', channels: ['hook'], threshold: 2 },
      { headers: ADMIN },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.param).toBe('threshold');
    expect(bad.body.error.message).toMatch(/^threshold: /);
    const channel = await get(`${gateway.adminUrl}/api/alerts/channels/hook`, ADMIN);
    expect(channel.body.secret).toBe('ale****t-01');
    expect((await get(`${gateway.adminUrl}/api/alerts/rules`)).status).toBe(401);
  });
});

// The rules that read the request log, through the embedded gateway's own log store: an error rate from the
// records of answered requests, and drops from the counts of requests a full provider queue refused.
describe('alerts from the request log (embedded)', () => {
  const dial = { failing: false, delayMs: 0 };
  let upstream: FakeUpstream;
  let receiver: FakeUpstream;
  let gateway: LaunchedGateway;
  const deliveries = (rule: string) => signedDeliveries(receiver, rule);

  beforeAll(async () => {
    receiver = await startFakeWebhookReceiver(SECRET);
    upstream = await startFakeUpstream([
      {
        method: 'POST',
        path: /\/chat\/completions$/,
        answer: () =>
          dial.failing
            ? { status: 400, json: { error: { message: 'refused upstream', type: 'invalid_request_error' } } }
            : { json: chatCompletion(), delayMs: dial.delayMs },
      },
    ]);
    gateway = await startEmbedded({
      adminToken: ADMIN_TOKEN,
      config: {
        providers: {
          openai: {
            keys: [{ value: 'sk-openai' }],
            network_config: { base_url: upstream.url, max_retries: 0 },
          },
        },
        alerts: { evaluation_interval_ms: 1_000 },
      },
    });
    const channel = await post(
      `${gateway.adminUrl}/api/alerts/channels`,
      { id: 'hook', type: 'webhook', url: `${receiver.url}/gw`, secret: SECRET },
      { headers: ADMIN },
    );
    expect(channel.status).toBe(201);
  }, scaled(60_000));
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
    await receiver?.close();
  });

  const chat = () =>
    post(`${gateway.url}/v1/chat/completions`, {
      model: 'openai/gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
    });

  it('an error rate over the window alerts once, from the records the gateway logged', {
    timeout: scaled(30_000),
  }, async () => {
    const rule = await post(
      `${gateway.adminUrl}/api/alerts/rules`,
      {
        id: 'errors',
        kind: 'error_rate',
        channels: ['hook'],
        threshold: 0.5,
        min_requests: 10,
        window_ms: 60_000,
      },
      { headers: ADMIN },
    );
    expect(rule.status).toBe(201);
    for (let index = 0; index < 5; index++) expect((await chat()).status).toBe(200);
    // The alert reads the log: the five served requests are in it first.
    await waitFor(
      async () => (await get(`${gateway.adminUrl}/api/logs?limit=10`, ADMIN)).body.records?.length >= 5,
      { what: 'the five served requests in the log' },
    );
    // Negative check: two evaluations of five served requests send nothing.
    await pauseForNegativeCheck(2_000);
    expect(deliveries('errors')).toEqual([]);
    dial.failing = true;
    for (let index = 0; index < 10; index++) expect((await chat()).status).toBe(400);
    dial.failing = false;
    await waitFor(() => deliveries('errors').length > 0, { timeoutMs: 10_000, what: 'the error-rate alert' });
    expect(deliveries('errors')[0]).toMatchObject({ action: 'trigger' });
    // From the records: the five served and the failures logged when an evaluation came (all ten on an idle
    // machine; on a busy one an evaluation may come while they are being sent), at least half of them failed.
    const { error_rate: rate, errors, requests } = deliveries('errors')[0]!.details as Record<string, number>;
    expect(requests! - errors!).toBe(5);
    expect(errors).toBeGreaterThanOrEqual(5);
    expect(errors).toBeLessThanOrEqual(10);
    expect(rate).toBeCloseTo(errors! / requests!, 2);
  });

  it('requests a full provider queue dropped alert, from the dropped counts', {
    timeout: scaled(30_000),
  }, async () => {
    const rule = await post(
      `${gateway.adminUrl}/api/alerts/rules`,
      {
        id: 'drops',
        kind: 'dropped_requests',
        channels: ['hook'],
        threshold: 2,
        reasons: ['provider_queue_full'],
        window_ms: 120_000,
      },
      { headers: ADMIN },
    );
    expect(rule.status).toBe(201);
    const network = (settings: Record<string, unknown>) =>
      call('PATCH', `${gateway.adminUrl}/api/providers/openai`, { network_config: settings }, ADMIN);
    expect((await network({ concurrency: 1, buffer_size: 0, drop_excess_requests: true })).status).toBe(200);
    // Bursts of five at a slow upstream until the change has reached the router and some are dropped.
    dial.delayMs = 1_000;
    const dropped = await waitFor(
      async () => {
        const answers = await Promise.all(Array.from({ length: 5 }, () => chat()));
        const refused = answers.filter((answer) => answer.status === 503).length;
        return refused > 0 ? refused : undefined;
      },
      { what: 'requests dropped by the provider’s new concurrency' },
    ).finally(() => {
      dial.delayMs = 0;
    });
    expect(dropped).toBeGreaterThanOrEqual(2);
    await waitFor(() => deliveries('drops').length > 0, {
      timeoutMs: 10_000,
      what: 'the dropped-requests alert',
    });
    expect(deliveries('drops')[0]).toMatchObject({
      action: 'trigger',
      details: { dropped: dropped, provider_queue_full: dropped },
    });
    expect(
      (await network({ concurrency: null, buffer_size: 1_000, drop_excess_requests: false })).status,
    ).toBe(200);
  });
});
