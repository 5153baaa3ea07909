/**
 * Test helpers: fakes of the receivers gw's alert channels post to, each answering as the real service does,
 * and refusing what the real one refuses.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { startFakeUpstream } from './fake-upstream.ts';

/** A Slack incoming webhook: 200 `ok` for a payload with `text` or `blocks`, 400 `invalid_payload` otherwise. */
export function startFakeSlackWebhook() {
  return startFakeUpstream([
    {
      method: 'POST',
      path: /^\/services\/[^/]+\/[^/]+\/[^/]+$/,
      answer: (request) => {
        const body = request.body as { text?: unknown; blocks?: unknown } | undefined;
        const valid =
          request.headers['content-type']?.startsWith('application/json') &&
          body &&
          (typeof body.text === 'string' || Array.isArray(body.blocks));
        return {
          respond: async (response) => {
            response.writeHead(valid ? 200 : 400, { 'content-type': 'text/plain' });
            response.end(valid ? 'ok' : 'invalid_payload');
          },
        };
      },
    },
  ]);
}

const EVENT_ACTIONS = ['trigger', 'acknowledge', 'resolve'];
const SEVERITIES = ['critical', 'error', 'warning', 'info'];

/**
 * PagerDuty Events API v2: `POST /v2/enqueue` answers 202 `{status, message, dedup_key}`, or 400
 * `{status: 'invalid event', errors}` for a missing routing key, an unknown action, or a trigger without its
 * payload's summary, source and severity.
 */
export function startFakePagerDuty() {
  return startFakeUpstream([
    {
      method: 'POST',
      path: /^\/v2\/enqueue$/,
      answer: (request) => {
        const event = (request.body ?? {}) as Record<string, unknown>;
        const payload = (event['payload'] ?? {}) as Record<string, unknown>;
        const errors: string[] = [];
        if (typeof event['routing_key'] !== 'string' || event['routing_key'] === '')
          errors.push("'routing_key' is missing or blank");
        if (!EVENT_ACTIONS.includes(String(event['event_action'])))
          errors.push("'event_action' is invalid (must be one of: trigger, acknowledge, resolve)");
        if (event['event_action'] === 'trigger') {
          for (const field of ['summary', 'source'])
            if (typeof payload[field] !== 'string' || payload[field] === '')
              errors.push(`'payload.${field}' is missing or blank`);
          if (!SEVERITIES.includes(String(payload['severity'])))
            errors.push("'payload.severity' is invalid (must be one of: critical, error, warning, info)");
        } else if (typeof event['dedup_key'] !== 'string') {
          errors.push("'dedup_key' is missing or blank");
        }
        if (errors.length > 0)
          return {
            status: 400,
            json: { status: 'invalid event', message: 'Event object is invalid', errors },
          };
        return {
          status: 202,
          json: {
            status: 'success',
            message: 'Event processed',
            dedup_key: event['dedup_key'] ?? 'generated',
          },
        };
      },
    },
  ]);
}

/**
 * A generic receiver that checks gw's webhook signature (`x-gw-signature: v1=<HMAC-SHA256 of
 * "<x-gw-timestamp>.<body>">`) as docs/alerts.md tells receivers to: 401 when it does not match.
 */
export function startFakeWebhookReceiver(secret: string) {
  return startFakeUpstream([
    {
      method: 'POST',
      path: /.*/,
      answer: (request) => {
        const timestamp = String(request.headers['x-gw-timestamp'] ?? '');
        const signature = Buffer.from(String(request.headers['x-gw-signature'] ?? ''));
        const expected = Buffer.from(
          `v1=${createHmac('sha256', secret)
            .update(`${timestamp}.${request.raw.toString('utf8')}`)
            .digest('hex')}`,
        );
        const valid = signature.length === expected.length && timingSafeEqual(signature, expected);
        return valid
          ? { status: 200, json: { received: true } }
          : { status: 401, json: { error: 'bad signature' } };
      },
    },
  ]);
}
