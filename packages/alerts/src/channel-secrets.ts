import { type AlertChannel, CHANNEL_SECRET_FIELDS } from './alert-schemas.ts';
import { ChannelSendError } from './channels/http-post.ts';

/** Reads a credential reference (`env.NAME`, `vault.…`): its value, or undefined when it has none. */
export type SecretReader = (value: string) => string | undefined;

/**
 * A channel with its credentials (`secret`, `routing_key`, `password`, webhook header values) read through
 * `read` at send time: only Admin may store references through the API (the one secret policy), and a rotated
 * secret is used from the next send. Throws naming the field and the reference when one has no value.
 */
export function withChannelSecrets(channel: AlertChannel, read: SecretReader | undefined): AlertChannel {
  if (!read) return channel;
  const resolve = (field: string, value: string) => {
    const resolved = read(value);
    if (resolved === undefined)
      throw new ChannelSendError(
        `channel ${channel.id}: ${field} names '${value}', which has no value here`,
        false,
      );
    return resolved;
  };
  const resolved: Record<string, unknown> = { ...channel };
  for (const field of CHANNEL_SECRET_FIELDS[channel.type]) {
    const value = resolved[field];
    if (typeof value === 'string') resolved[field] = resolve(field, value);
  }
  if (channel.type === 'webhook' && channel.headers) {
    resolved['headers'] = Object.fromEntries(
      Object.entries(channel.headers).map(([name, value]) => [name, resolve(`headers.${name}`, value)]),
    );
  }
  return resolved as AlertChannel;
}
