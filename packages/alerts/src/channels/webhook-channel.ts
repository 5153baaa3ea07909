import type { Dispatcher } from 'undici';
import type { AlertNotification } from '../alert-schemas.ts';
import { postJson } from './http-post.ts';
import { SIGNATURE_HEADER, signWebhook, TIMESTAMP_HEADER } from './webhook-signature.ts';

/** A generic receiver: the notification as JSON (`version: 1`), signed with the channel's secret. */
export async function sendWebhook(options: {
  channel: { url: string; secret: string; headers?: Record<string, string> | undefined };
  notification: AlertNotification;
  timeoutMs: number;
  /** The alerts' agent (the outbound address policy). */
  dispatcher?: Dispatcher | undefined;
  nowSeconds: number;
}): Promise<void> {
  const { channel, notification } = options;
  const body = JSON.stringify({ version: 1, ...notification });
  await postJson({
    url: channel.url,
    body,
    timeoutMs: options.timeoutMs,
    dispatcher: options.dispatcher,
    headers: {
      ...channel.headers,
      'user-agent': 'gw-alerts/1',
      [TIMESTAMP_HEADER]: String(options.nowSeconds),
      [SIGNATURE_HEADER]: signWebhook({ secret: channel.secret, timestamp: options.nowSeconds, body }),
    },
  });
}
