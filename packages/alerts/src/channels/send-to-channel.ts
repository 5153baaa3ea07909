import { checkOutboundUrl, type OutboundPolicy } from '@gw/shared';
import type { Dispatcher } from 'undici';
import type { AlertChannel, AlertNotification } from '../alert-schemas.ts';
import { sendEmail } from './email-channel.ts';
import { ChannelSendError } from './http-post.ts';
import { sendPagerDuty } from './pagerduty-channel.ts';
import { sendSlack } from './slack-channel.ts';
import { sendWebhook } from './webhook-channel.ts';

/** Sends one notification on one channel; throws ChannelSendError (or any error) when it did not go out. */
export async function sendToChannel(options: {
  channel: AlertChannel;
  notification: AlertNotification;
  timeoutMs: number;
  now: number;
  /**
   * The outbound address policy and an agent that applies it at every connection (docs/network.md); without
   * it (unit tests) channels send anywhere.
   */
  outbound?: { policy: OutboundPolicy; dispatcher: Dispatcher } | undefined;
}): Promise<void> {
  const { channel, notification, timeoutMs, outbound } = options;
  const dispatcher = outbound?.dispatcher;
  switch (channel.type) {
    case 'webhook':
      return sendWebhook({
        channel,
        notification,
        timeoutMs,
        nowSeconds: Math.floor(options.now / 1000),
        dispatcher,
      });
    case 'slack':
      return sendSlack({ channel, notification, timeoutMs, dispatcher });
    case 'pagerduty':
      return sendPagerDuty({ channel, notification, timeoutMs, dispatcher });
    case 'email':
      // nodemailer resolves the name itself: checked just before, not pinned to the socket (docs/network.md).
      if (outbound) await assertSendable(outboundChannelUrls(channel), outbound.policy);
      return sendEmail({ channel, notification, timeoutMs });
  }
}

/** The addresses a channel sends to, as URLs the outbound address policy checks, with the field each comes from. */
export function outboundChannelUrls(channel: AlertChannel): Array<{ field: string; url: string }> {
  switch (channel.type) {
    case 'webhook':
    case 'slack':
    case 'pagerduty':
      return [{ field: 'url', url: channel.url }];
    case 'email':
      return [
        { field: 'host', url: `smtp://${channel.host.includes(':') ? `[${channel.host}]` : channel.host}/` },
      ];
  }
}

async function assertSendable(urls: Array<{ field: string; url: string }>, policy: OutboundPolicy) {
  for (const { field, url } of urls) {
    try {
      await checkOutboundUrl(url, policy, { field, protocols: ['http:', 'https:', 'smtp:'] });
    } catch (error) {
      throw new ChannelSendError((error as Error).message, false);
    }
  }
}
