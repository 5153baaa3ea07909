import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { outboundPolicy } from '@gw/shared';
import { outboundAgent } from '@gw/shared/outbound';
import {
  startFakePagerDuty,
  startFakeSlackWebhook,
  startFakeUpstream,
  startFakeWebhookReceiver,
} from '@gw/testkit';
import { SMTPServer } from 'smtp-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AlertChannel, type AlertNotification, alertChannelSchema } from '../alert-schemas.ts';
import { ChannelSendError } from './http-post.ts';
import { sendToChannel } from './send-to-channel.ts';
import { verifyWebhook } from './webhook-signature.ts';

const notification: AlertNotification = {
  action: 'trigger',
  rule_id: 'openai-errors',
  kind: 'error_rate',
  subject: 'openai',
  severity: 'critical',
  summary: 'Error rate 12% over the last 5 min (openai), threshold 5%',
  dedup_key: 'gw:openai-errors:openai',
  time: Date.UTC(2026, 0, 2, 3, 4, 5),
  details: { error_rate: 0.12, requests: 200 },
};
const SECRET = 'whsec-0123456789abcdef';
const send = (channel: unknown, sent: AlertNotification = notification) =>
  sendToChannel({
    channel: alertChannelSchema.parse(channel),
    notification: sent,
    timeoutMs: 2_000,
    now: Date.now(),
  });

describe('webhook channel', () => {
  it('posts the notification as JSON, signed so that the documented check verifies it', async () => {
    const receiver = await startFakeWebhookReceiver(SECRET);
    try {
      await send({
        id: 'hook',
        type: 'webhook',
        url: `${receiver.url}/alerts`,
        secret: SECRET,
        headers: { 'x-team': 'ops' },
      });
      const request = receiver.last();
      expect(request.path).toBe('/alerts');
      expect(request.headers['content-type']).toBe('application/json');
      expect(request.headers['x-team']).toBe('ops');
      expect(request.body).toEqual({ version: 1, ...notification });
      expect(
        verifyWebhook({
          secret: SECRET,
          body: request.raw.toString('utf8'),
          timestamp: request.headers['x-gw-timestamp'] as string,
          signature: request.headers['x-gw-signature'] as string,
        }),
      ).toBe(true);
      // The same delivery with another secret, another body or an old timestamp does not verify.
      const headers = request.headers as Record<string, string>;
      const check = (overrides: { secret?: string; body?: string; nowSeconds?: number }) =>
        verifyWebhook({
          secret: overrides.secret ?? SECRET,
          body: overrides.body ?? request.raw.toString('utf8'),
          timestamp: headers['x-gw-timestamp'],
          signature: headers['x-gw-signature'],
          ...(overrides.nowSeconds !== undefined && { nowSeconds: overrides.nowSeconds }),
        });
      expect(check({ secret: 'another-secret-0123456' })).toBe(false);
      expect(check({ body: request.raw.toString('utf8').replace('12%', '13%') })).toBe(false);
      expect(check({ nowSeconds: Number(headers['x-gw-timestamp']) + 3_600 })).toBe(false);
    } finally {
      await receiver.close();
    }
  });

  it('fails when the receiver refuses the signature (a wrong secret)', async () => {
    const receiver = await startFakeWebhookReceiver(SECRET);
    try {
      const failure = send({
        id: 'hook',
        type: 'webhook',
        url: receiver.url,
        secret: 'not-the-receivers-secret',
      });
      await expect(failure).rejects.toThrow(/answered 401/);
      await expect(failure).rejects.toMatchObject({ retryable: false });
    } finally {
      await receiver.close();
    }
  });
});

describe('Slack channel', () => {
  it('posts an incoming-webhook payload: text plus Block Kit sections', async () => {
    const slack = await startFakeSlackWebhook();
    try {
      await send({ id: 'slack', type: 'slack', url: `${slack.url}/services/T000/B000/XXXX` });
      const body = slack.last().body as { text: string; blocks: Array<Record<string, unknown>> };
      expect(body.text).toBe(
        ':rotating_light: CRITICAL: Error rate 12% over the last 5 min (openai), threshold 5%',
      );
      expect(body.blocks[0]).toEqual({ type: 'section', text: { type: 'mrkdwn', text: body.text } });
      expect(body.blocks[1]).toEqual({
        type: 'section',
        fields: [
          { type: 'mrkdwn', text: '*error_rate*\n0.12' },
          { type: 'mrkdwn', text: '*requests*\n200' },
        ],
      });
      expect(body.blocks[2]).toMatchObject({ type: 'context' });
      await send(
        { id: 'slack', type: 'slack', url: `${slack.url}/services/T000/B000/XXXX` },
        {
          ...notification,
          action: 'resolve',
          summary: 'Error rate <back> & fine',
        },
      );
      expect((slack.last().body as { text: string }).text).toBe(
        ':white_check_mark: Resolved: Error rate &lt;back&gt; &amp; fine',
      );
    } finally {
      await slack.close();
    }
  });
});

describe('PagerDuty channel', () => {
  it('enqueues a trigger with its payload and a resolve with the same dedup_key', async () => {
    const pagerDuty = await startFakePagerDuty();
    const channel = {
      id: 'pd',
      type: 'pagerduty',
      routing_key: 'R0123456789ABCDEF0123456789ABCDE',
      url: pagerDuty.url,
    };
    try {
      await send(channel);
      expect(pagerDuty.last().path).toBe('/v2/enqueue');
      expect(pagerDuty.last().body).toEqual({
        routing_key: 'R0123456789ABCDEF0123456789ABCDE',
        event_action: 'trigger',
        dedup_key: 'gw:openai-errors:openai',
        payload: {
          summary: notification.summary,
          source: 'gw',
          severity: 'critical',
          timestamp: '2026-01-02T03:04:05.000Z',
          component: 'openai',
          class: 'error_rate',
          group: 'openai-errors',
          custom_details: { error_rate: 0.12, requests: 200 },
        },
      });
      await send(channel, { ...notification, action: 'resolve' });
      expect(pagerDuty.last().body).toEqual({
        routing_key: 'R0123456789ABCDEF0123456789ABCDE',
        event_action: 'resolve',
        dedup_key: 'gw:openai-errors:openai',
      });
      expect(pagerDuty.requests).toHaveLength(2);
    } finally {
      await pagerDuty.close();
    }
  });

  it('treats a 5xx as retryable and a 400 as final', async () => {
    const upstream = await startFakeUpstream([]);
    try {
      upstream.enqueue(
        { status: 503, json: { status: 'unavailable' } },
        { status: 400, json: { status: 'invalid event' } },
      );
      const channel = { id: 'pd', type: 'pagerduty', routing_key: 'key', url: upstream.url };
      await expect(send(channel)).rejects.toMatchObject({ retryable: true });
      const refused = await send(channel).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(ChannelSendError);
      expect(refused).toMatchObject({ retryable: false });
    } finally {
      await upstream.close();
    }
  });
});

describe('email channel', () => {
  const received: Array<{ from: string; to: string[]; user: string | undefined; data: string }> = [];
  let server: SMTPServer;
  let port: number;

  beforeAll(async () => {
    server = new SMTPServer({
      // A plain local server: no TLS to offer, AUTH allowed over it for the test only.
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      onAuth(auth, _session, callback) {
        if (auth.username === 'alerts' && auth.password === 'smtp-password')
          return callback(null, { user: 'alerts' });
        return callback(new Error('Invalid username or password'));
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          received.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((recipient) => recipient.address),
            user: session.user as string | undefined,
            data: Buffer.concat(chunks).toString('utf8'),
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.server.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const channel = (password: string): AlertChannel =>
    alertChannelSchema.parse({
      id: 'mail',
      type: 'email',
      host: '127.0.0.1',
      port,
      username: 'alerts',
      password,
      from: 'gw@example.com',
      to: ['oncall@example.com', 'lead@example.com'],
    });

  it('sends one message to every recipient, authenticated, with the summary as subject', async () => {
    await sendToChannel({
      channel: channel('smtp-password'),
      notification,
      timeoutMs: 5_000,
      now: Date.now(),
    });
    expect(received).toHaveLength(1);
    const [message] = received;
    expect(message!.user).toBe('alerts');
    expect(message!.from).toBe('gw@example.com');
    expect(message!.to).toEqual(['oncall@example.com', 'lead@example.com']);
    expect(message!.data).toMatch(
      /^Subject: \[gw CRITICAL\] Error rate 12% over the last 5 min \(openai\),/m,
    );
    expect(message!.data).toMatch(/^X-Gw-Alert-Dedup-Key: gw:openai-errors:openai$/m);
    expect(message!.data).toContain('rule: openai-errors');
    expect(message!.data).toContain('error_rate: 0.12');
  });

  it('fails without retry when the server refuses the credentials', async () => {
    const failure = sendToChannel({
      channel: channel('wrong-password'),
      notification,
      timeoutMs: 5_000,
      now: Date.now(),
    });
    await expect(failure).rejects.toThrow(/SMTP: .*Invalid username or password/);
    await expect(failure).rejects.toMatchObject({ retryable: false });
  });
});

describe('channels and the outbound address policy', () => {
  let server: Server;
  let url: string;
  let hits = 0;

  beforeAll(async () => {
    // An internal service: its body must never come back through an alert channel's error.
    server = createServer((_request, response) => {
      hits += 1;
      response.writeHead(500, { 'content-type': 'text/plain' });
      response.end('internal-service-secret-body');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('reports a receiver failure as its status, never its body', async () => {
    const failure = send({ id: 'hook', type: 'webhook', url, secret: SECRET });
    await expect(failure).rejects.toThrow(/^the receiver answered 500$/);
  });

  it('refuses a receiver the policy refuses, before any connection', async () => {
    const policy = outboundPolicy({ allow_loopback: false });
    const dispatcher = outboundAgent(policy);
    const before = hits;
    const port = new URL(url).port;
    for (const channel of [
      { id: 'hook', type: 'webhook', url, secret: SECRET },
      { id: 'hook', type: 'webhook', url: `http://[::ffff:7f00:1]:${port}/`, secret: SECRET },
      { id: 'slack', type: 'slack', url: `http://localhost:${port}/services/T/B/X` },
      { id: 'pd', type: 'pagerduty', url, routing_key: 'R0123456789' },
      {
        id: 'mail',
        type: 'email',
        host: '127.0.0.1',
        port: Number(port),
        from: 'gw@example.com',
        to: ['ops@example.com'],
      },
    ]) {
      const failure = sendToChannel({
        channel: alertChannelSchema.parse(channel),
        notification,
        timeoutMs: 2_000,
        now: Date.now(),
        outbound: { policy, dispatcher },
      });
      await expect(failure).rejects.toThrow(/is a loopback address .* gw does not call it$/);
      await expect(failure).rejects.toMatchObject({ retryable: false });
    }
    expect(hits).toBe(before);
    await dispatcher.close();
  });
});
