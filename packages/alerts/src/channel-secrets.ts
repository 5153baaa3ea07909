import { fieldTree, mapFields } from '@gw/shared';
import { type AlertChannel, alertChannelSchema } from './alert-schemas.ts';
import { ChannelSendError } from './channels/http-post.ts';

/** Reads a credential reference (`env.NAME`, `vault.…`): its value, or undefined when it has none. */
export type SecretReader = (value: string) => string | undefined;

/**
 * A channel with its credentials (the fields its schema declares `secret`: `secret`, `routing_key`, `password`,
 * webhook header values) read through `read` at send time: only Admin may store references through the API (the
 * one secret policy), and a rotated secret is used from the next send. Throws naming the field and the
 * reference when one has no value.
 */
export function withChannelSecrets(channel: AlertChannel, read: SecretReader | undefined): AlertChannel {
  if (!read) return channel;
  return mapFields(fieldTree(alertChannelSchema), channel, ({ path, value, secret }) => {
    if (!secret || typeof value !== 'string') return value;
    const resolved = read(value);
    if (resolved === undefined)
      throw new ChannelSendError(
        `channel ${channel.id}: ${path} names '${value}', which has no value here`,
        false,
      );
    return resolved;
  }) as AlertChannel;
}
