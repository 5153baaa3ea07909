import type { AlertChannel, AlertNotification } from '../alert-schemas.ts';
import { sendEmail } from './email-channel.ts';
import { sendPagerDuty } from './pagerduty-channel.ts';
import { sendSlack } from './slack-channel.ts';
import { sendWebhook } from './webhook-channel.ts';

/** Sends one notification on one channel; throws ChannelSendError (or any error) when it did not go out. */
export async function sendToChannel(options: {
  channel: AlertChannel;
  notification: AlertNotification;
  timeoutMs: number;
  now: number;
}): Promise<void> {
  const { channel, notification, timeoutMs } = options;
  switch (channel.type) {
    case 'webhook':
      return sendWebhook({ channel, notification, timeoutMs, nowSeconds: Math.floor(options.now / 1000) });
    case 'slack':
      return sendSlack({ channel, notification, timeoutMs });
    case 'pagerduty':
      return sendPagerDuty({ channel, notification, timeoutMs });
    case 'email':
      return sendEmail({ channel, notification, timeoutMs });
  }
}
