import { createHmac, timingSafeEqual } from 'node:crypto';

/** Header carrying the time the body was signed at (epoch seconds). */
export const TIMESTAMP_HEADER = 'x-gw-timestamp';
/** Header carrying `v1=<hex HMAC-SHA256 of "<timestamp>.<body>">`. */
export const SIGNATURE_HEADER = 'x-gw-signature';

/** The signature header's value for a body signed at `timestamp` (epoch seconds). */
export function signWebhook(options: { secret: string; timestamp: number; body: string }): string {
  const digest = createHmac('sha256', options.secret)
    .update(`${options.timestamp}.${options.body}`)
    .digest('hex');
  return `v1=${digest}`;
}

/**
 * What a receiver runs (docs/alerts.md "Verifying a webhook"): the signature matches the raw body and the
 * timestamp, compared in constant time, and the timestamp is within `toleranceSeconds` of now (a replayed
 * old delivery fails).
 */
export function verifyWebhook(options: {
  secret: string;
  body: string;
  timestamp: string | undefined;
  signature: string | undefined;
  toleranceSeconds?: number;
  nowSeconds?: number;
}): boolean {
  const { timestamp, signature } = options;
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) return false;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(
    signWebhook({ secret: options.secret, timestamp: Number(timestamp), body: options.body }),
  );
  const received = Buffer.from(signature);
  return expected.length === received.length && timingSafeEqual(expected, received);
}
