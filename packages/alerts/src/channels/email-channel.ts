import { createTransport } from 'nodemailer';
import type { AlertNotification } from '../alert-schemas.ts';
import { ChannelSendError } from './http-post.ts';

interface EmailChannel {
  host: string;
  port: number;
  secure: boolean;
  username?: string | undefined;
  password?: string | undefined;
  from: string;
  to: string[];
}

/** The subject and plain-text body of a notification. */
function emailContent(notification: AlertNotification): { subject: string; text: string } {
  const prefix = notification.action === 'resolve' ? 'RESOLVED' : notification.severity.toUpperCase();
  const lines = [
    notification.summary,
    '',
    `rule: ${notification.rule_id}`,
    `subject: ${notification.subject}`,
    `time: ${new Date(notification.time).toISOString()}`,
    ...Object.entries(notification.details).map(([name, value]) => `${name}: ${String(value)}`),
  ];
  return { subject: `[gw ${prefix}] ${notification.summary}`.slice(0, 250), text: lines.join('\n') };
}

/** One message over SMTP; a 5xx reply will not get better, anything else (4xx, network) may. */
export async function sendEmail(options: {
  channel: EmailChannel;
  notification: AlertNotification;
  timeoutMs: number;
}): Promise<void> {
  const { channel } = options;
  const transport = createTransport({
    host: channel.host,
    port: channel.port,
    secure: channel.secure,
    ...(channel.username !== undefined && { auth: { user: channel.username, pass: channel.password ?? '' } }),
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: options.timeoutMs,
  });
  try {
    await transport.sendMail({
      from: channel.from,
      to: channel.to,
      headers: { 'X-Gw-Alert-Dedup-Key': options.notification.dedup_key },
      ...emailContent(options.notification),
    });
  } catch (error) {
    const code = (error as { responseCode?: number }).responseCode;
    throw new ChannelSendError(`SMTP: ${(error as Error).message}`, code === undefined || code < 500);
  } finally {
    transport.close();
  }
}
