// `/api/alerts/*` over a memory store: CRUD of rules and channels, 400s naming the field, redaction, history.
import { AlertDispatcher, AlertRegistry } from '@gw/alerts';
import { outboundPolicy, secretReferenceRule } from '@gw/shared';
import { MemoryStore } from '@gw/shared/store';
import { startFakeSlackWebhook, startFakeWebhookReceiver } from '@gw/testkit';
import { beforeEach, describe, expect, it } from 'vitest';
import { routeCaller } from '../../testing/admin-harness.ts';
import { createAlertsAdmin } from './alerts-admin.ts';

const SECRET = 'webhook-secret-0123456789';
let admin: ReturnType<typeof routeCaller>;
let registry: AlertRegistry;

beforeEach(async () => {
  registry = new AlertRegistry({ store: await MemoryStore.open() });
  admin = routeCaller(
    createAlertsAdmin({
      outbound: outboundPolicy(),
      secretReferences: secretReferenceRule({}),
      registry,
      dispatcher: new AlertDispatcher({ registry, backoffMs: 1 }),
      unsupported: (kind) =>
        kind === 'dropped_requests'
          ? 'needs the dropped-request counts, which this gateway does not have'
          : undefined,
    }),
  );
});

function call(method: string, path: string, body: unknown = {}, query = '') {
  return admin(method, path, { body, query: new URLSearchParams(query) });
}

/** The error a call throws, as the admin app would answer it. */
async function failure(method: string, path: string, body?: unknown, query?: string) {
  const error = await call(method, path, body, query).then(
    () => undefined,
    (thrown: unknown) => thrown as { status: number; message: string; param: string | null },
  );
  if (!error) throw new Error(`${method} ${path} did not fail`);
  return { status: error.status, message: error.message, param: error.param };
}

const webhook = {
  id: 'hook',
  type: 'webhook',
  url: 'https://user:pw@hooks.example.com/gw?token=abc',
  secret: SECRET,
  headers: { authorization: 'Bearer xyz' },
};

describe('alert channels', () => {
  it('creates, reads redacted, keeps masked secrets on PUT and PATCH, and deletes', async () => {
    const created = await call('POST', '/api/alerts/channels', webhook);
    expect(created.status).toBe(201);
    const shown = {
      id: 'hook',
      type: 'webhook',
      enabled: true,
      url: 'https://user:****@hooks.example.com/gw?token=****',
      secret: 'web****6789',
      headers: { authorization: '****' },
    };
    expect(created.body).toEqual(shown);
    expect((await call('GET', '/api/alerts/channels')).body).toEqual([shown]);
    expect((await call('GET', '/api/alerts/channels/hook')).body).toEqual(shown);
    // A read sent back with one change keeps every stored credential.
    await call('PUT', '/api/alerts/channels/hook', { ...shown, name: 'Ops hook' });
    expect(await registry.getChannel('hook')).toEqual({ ...webhook, enabled: true, name: 'Ops hook' });
    await call('PATCH', '/api/alerts/channels/hook', { enabled: false, secret: 'web****6789' });
    expect(await registry.getChannel('hook')).toMatchObject({
      enabled: false,
      secret: SECRET,
      url: webhook.url,
    });
    await call('PATCH', '/api/alerts/channels/hook', { secret: 'a-new-secret-of-enough-length' });
    expect(await registry.getChannel('hook')).toMatchObject({ secret: 'a-new-secret-of-enough-length' });
    expect((await call('DELETE', '/api/alerts/channels/hook')).body).toEqual({ deleted: 'hook' });
    expect(await failure('GET', '/api/alerts/channels/hook')).toMatchObject({ status: 404 });
  });

  it('masks the secret part of a Slack URL, a PagerDuty routing key and an SMTP password', async () => {
    const slack = await call('POST', '/api/alerts/channels', {
      id: 'slack',
      type: 'slack',
      url: 'https://hooks.slack.com/services/T0001/B0001/abcdefghijklmnopqrstuvwx',
    });
    expect(slack.body).toMatchObject({ url: 'https://hooks.slack.com/services/T0001/B0001/abc****uvwx' });
    const pagerDuty = await call('POST', '/api/alerts/channels', {
      id: 'pd',
      type: 'pagerduty',
      routing_key: 'R0123456789ABCDEF0123456789ABCDE',
    });
    expect(pagerDuty.body).toMatchObject({ routing_key: 'R01****BCDE', url: 'https://events.pagerduty.com' });
    const email = await call('POST', '/api/alerts/channels', {
      id: 'mail',
      type: 'email',
      host: 'smtp.example.com',
      username: 'u',
      password: 'p4ssw0rd',
      from: 'gw@example.com',
      to: ['ops@example.com'],
    });
    expect(email.body).toMatchObject({ password: '****', port: 587, secure: false });
    expect(JSON.stringify((await call('GET', '/api/alerts/channels')).body)).not.toMatch(
      /abcdefghijklmnop|0123456789ABCDEF0123|p4ssw0rd/,
    );
  });

  it('answers 400 naming the field, 409 for a duplicate or a channel still in use', async () => {
    expect(await failure('POST', '/api/alerts/channels', { id: 'x', type: 'sms' })).toMatchObject({
      status: 400,
      param: 'type',
    });
    expect(await failure('POST', '/api/alerts/channels', { ...webhook, secret: 'short' })).toMatchObject({
      status: 400,
      param: 'secret',
    });
    expect(
      await failure('POST', '/api/alerts/channels', { ...webhook, url: 'ftp://example.com' }),
    ).toMatchObject({ status: 400, param: 'url', message: 'url: must be an http:// or https:// URL' });
    expect(
      await failure('POST', '/api/alerts/channels', {
        id: 'm',
        type: 'email',
        host: 'h',
        from: 'nobody',
        to: ['a@example.com'],
      }),
    ).toMatchObject({ status: 400, param: 'from' });
    expect(await failure('POST', '/api/alerts/channels', { ...webhook, id: 'bad id' })).toMatchObject({
      status: 400,
      param: 'id',
    });
    expect(await failure('POST', '/api/alerts/channels', { ...webhook, extra: 1 })).toMatchObject({
      status: 400,
    });
    expect(
      await failure('POST', '/api/alerts/channels', { ...webhook, headers: { 'X-Gw-Signature': 'forged' } }),
    ).toMatchObject({
      status: 400,
      param: 'headers.X-Gw-Signature',
      message: 'headers.X-Gw-Signature: is set by gw itself',
    });
    await call('POST', '/api/alerts/channels', webhook);
    expect(await failure('POST', '/api/alerts/channels', webhook)).toMatchObject({
      status: 409,
      param: 'id',
    });
    await call('POST', '/api/alerts/rules', { id: 'health', kind: 'provider_health', channels: ['hook'] });
    expect(await failure('DELETE', '/api/alerts/channels/hook')).toMatchObject({
      status: 409,
      message: "alert channel 'hook' is still used by the rules 'health'",
    });
    expect(await failure('PATCH', '/api/alerts/channels/hook', { port: 25 })).toMatchObject({ status: 400 });
  });

  it('sends a test notification and records it in the history', async () => {
    const receiver = await startFakeWebhookReceiver(SECRET);
    const slack = await startFakeSlackWebhook();
    try {
      await call('POST', '/api/alerts/channels', {
        id: 'hook',
        type: 'webhook',
        url: receiver.url,
        secret: SECRET,
      });
      await call('POST', '/api/alerts/channels', {
        id: 'slack',
        type: 'slack',
        url: `${slack.url}/not/a-slack-path`,
      });
      const sent = await call('POST', '/api/alerts/channels/hook/test');
      expect(sent.body).toMatchObject({ channel_id: 'hook', action: 'test', outcome: 'sent', attempts: 1 });
      expect(receiver.last().body).toMatchObject({
        action: 'test',
        summary: 'Test notification from gw to channel hook',
      });
      const refused = await call('POST', '/api/alerts/channels/slack/test');
      expect(refused.body).toMatchObject({ outcome: 'failed', attempts: 1 });
      const history = await call('GET', '/api/alerts/history', {}, 'limit=1');
      const page = history.body as { entries: Array<{ channel_id: string }>; next_cursor: string };
      expect(page.entries.map((entry) => entry.channel_id)).toEqual(['slack']);
      const next = (await call('GET', '/api/alerts/history', {}, `cursor=${page.next_cursor}`))
        .body as typeof page;
      expect(next).toMatchObject({ entries: [{ channel_id: 'hook' }], next_cursor: null });
      expect(await failure('GET', '/api/alerts/history', {}, 'limit=0')).toMatchObject({
        status: 400,
        param: 'limit',
      });
      expect(await failure('GET', '/api/alerts/history', {}, 'cursor=zzz')).toMatchObject({
        status: 400,
        param: 'cursor',
      });
      expect(await failure('GET', '/api/alerts/channels/hook/test')).toMatchObject({ status: 405 });
    } finally {
      await receiver.close();
      await slack.close();
    }
  });
});

describe('alert rules', () => {
  beforeEach(async () => {
    await call('POST', '/api/alerts/channels', webhook);
  });

  it('creates with defaults, replaces, patches and deletes', async () => {
    const created = await call('POST', '/api/alerts/rules', {
      id: 'budgets',
      kind: 'budget_threshold',
      channels: ['hook'],
    });
    expect(created).toEqual({
      status: 201,
      body: {
        id: 'budgets',
        kind: 'budget_threshold',
        channels: ['hook'],
        enabled: true,
        severity: 'warning',
        cooldown_ms: 900_000,
        notify_resolved: true,
        thresholds: [50, 80, 100],
      },
    });
    const replaced = await call('PUT', '/api/alerts/rules/budgets', {
      kind: 'budget_threshold',
      channels: ['hook'],
      thresholds: [90],
    });
    expect(replaced.body).toMatchObject({ id: 'budgets', thresholds: [90] });
    const patched = await call('PATCH', '/api/alerts/rules/budgets', {
      severity: 'critical',
      levels: ['team'],
    });
    expect(patched.body).toMatchObject({
      id: 'budgets',
      thresholds: [90],
      severity: 'critical',
      levels: ['team'],
    });
    expect((await call('GET', '/api/alerts/rules')).body).toHaveLength(1);
    expect((await call('DELETE', '/api/alerts/rules/budgets')).body).toEqual({ deleted: 'budgets' });
    expect(await failure('DELETE', '/api/alerts/rules/budgets')).toMatchObject({ status: 404 });
  });

  it('answers 400 naming the field', async () => {
    const cases: Array<[unknown, string, RegExp]> = [
      [{ id: 'r', kind: 'error_rate', channels: ['hook'] }, 'threshold', /^threshold: is required$/],
      [{ id: 'r', kind: 'error_rate', channels: ['hook'], threshold: 5 }, 'threshold', /^threshold: /],
      [
        { id: 'r', kind: 'latency', channels: ['hook'], threshold_ms: 100, percentile: 'p90' },
        'percentile',
        /^percentile: /,
      ],
      [
        { id: 'r', kind: 'budget_threshold', channels: ['hook'], thresholds: [50, 50] },
        'thresholds',
        /must not repeat/,
      ],
      [{ id: 'r', kind: 'provider_health', channels: [] }, 'channels', /^channels: /],
      [
        { id: 'r', kind: 'provider_health', channels: ['hook', 'nope'] },
        'channels.1',
        /^channels\.1: names no alert channel 'nope'$/,
      ],
      [{ id: 'r', kind: 'weather', channels: ['hook'] }, 'kind', /^kind: /],
      [
        { id: 'r', kind: 'dropped_requests', channels: ['hook'], threshold: 1 },
        'kind',
        /^kind: 'dropped_requests' needs the dropped-request counts/,
      ],
      [
        { id: 'r', kind: 'error_rate', channels: ['hook'], threshold: 0.1, window_ms: 1_000 },
        'window_ms',
        /^window_ms: /,
      ],
    ];
    for (const [body, param, message] of cases) {
      const answer = await failure('POST', '/api/alerts/rules', body);
      expect(answer, JSON.stringify(body)).toMatchObject({ status: 400, param });
      expect(answer.message).toMatch(message);
    }
    await call('POST', '/api/alerts/rules', { id: 'r', kind: 'provider_health', channels: ['hook'] });
    expect(
      await failure('POST', '/api/alerts/rules', { id: 'r', kind: 'provider_health', channels: ['hook'] }),
    ).toMatchObject({ status: 409 });
    expect(await failure('PATCH', '/api/alerts/rules/r', { states: ['sunny'] })).toMatchObject({
      status: 400,
      param: 'states.0',
    });
    expect(await failure('GET', '/api/alerts/rules/r/extra')).toMatchObject({ status: 404 });
    expect(await failure('DELETE', '/api/alerts/rules')).toMatchObject({ status: 405 });
  });
});

describe('without a store', () => {
  it('answers 503 saying why', async () => {
    const bare = createAlertsAdmin({ outbound: outboundPolicy(), secretReferences: secretReferenceRule({}) });
    const error = await routeCaller(bare)('GET', '/api/alerts/rules').catch(
      (thrown: unknown) => thrown as { status: number; message: string },
    );
    expect(error).toMatchObject({
      status: 503,
      message: expect.stringMatching(/alerts live in the state store/),
    });
  });
});
