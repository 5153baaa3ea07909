import type { Dispatcher } from 'undici';
import type { AlertNotification } from '../alert-schemas.ts';
import { postJson } from './http-post.ts';

const ICON = { trigger: ':rotating_light:', resolve: ':white_check_mark:', test: ':wave:' } as const;

/** Slack escapes only these three in message text. */
function escapeText(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');
}

/**
 * A Slack incoming webhook: `text` (the notification fallback) plus Block Kit blocks, a header section and a
 * context line. Slack answers 200 `ok`, or 4xx with a reason such as `invalid_payload` or `no_service`.
 */
function slackPayload(notification: AlertNotification) {
  const title = `${ICON[notification.action]} ${notification.action === 'resolve' ? 'Resolved' : notification.severity.toUpperCase()}: ${notification.summary}`;
  const fields = Object.entries(notification.details)
    .slice(0, 10)
    .map(([name, value]) => ({
      type: 'mrkdwn',
      text: `*${escapeText(name)}*\n${escapeText(String(value))}`,
    }));
  return {
    text: escapeText(title),
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: escapeText(title) } },
      ...(fields.length > 0 ? [{ type: 'section', fields }] : []),
      {
        type: 'context',
        elements: [
          {
            type: 'mrkdwn',
            text: escapeText(
              `rule ${notification.rule_id} · ${notification.subject} · ${new Date(notification.time).toISOString()}`,
            ),
          },
        ],
      },
    ],
  };
}

export async function sendSlack(options: {
  channel: { url: string };
  notification: AlertNotification;
  timeoutMs: number;
  /** The alerts' agent (the outbound address policy). */
  dispatcher?: Dispatcher | undefined;
}): Promise<void> {
  await postJson({
    url: options.channel.url,
    body: JSON.stringify(slackPayload(options.notification)),
    timeoutMs: options.timeoutMs,
    dispatcher: options.dispatcher,
  });
}
