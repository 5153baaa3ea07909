import type { Dispatcher } from 'undici';
import type { AlertNotification } from '../alert-schemas.ts';
import { postJson } from './http-post.ts';

/**
 * PagerDuty Events API v2 (`POST /v2/enqueue`): a trigger opens (or adds to) the incident of its dedup_key, a
 * resolve closes it. A test notification is a trigger whose dedup_key is its own, so it never touches a real
 * incident. Summary is cut to PagerDuty's 1024 characters.
 */
function pagerDutyEvent(notification: AlertNotification, routingKey: string) {
  const eventAction = notification.action === 'resolve' ? 'resolve' : 'trigger';
  return {
    routing_key: routingKey,
    event_action: eventAction,
    dedup_key: notification.dedup_key,
    ...(eventAction === 'trigger' && {
      payload: {
        summary: notification.summary.slice(0, 1024),
        source: 'gw',
        severity: notification.severity,
        timestamp: new Date(notification.time).toISOString(),
        component: notification.subject,
        class: notification.kind,
        group: notification.rule_id,
        custom_details: notification.details,
      },
    }),
  };
}

export async function sendPagerDuty(options: {
  channel: { url: string; routing_key: string };
  notification: AlertNotification;
  timeoutMs: number;
  /** The alerts' agent (the outbound address policy). */
  dispatcher?: Dispatcher | undefined;
}): Promise<void> {
  await postJson({
    url: new URL('/v2/enqueue', options.channel.url).toString(),
    body: JSON.stringify(pagerDutyEvent(options.notification, options.channel.routing_key)),
    timeoutMs: options.timeoutMs,
    dispatcher: options.dispatcher,
  });
}
