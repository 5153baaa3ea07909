import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '../errors/gateway-error.ts';

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Whether a secret a caller sent is the expected one, compared in constant time (length included). */
export function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
function bearerToken(headers: IncomingHttpHeaders): string | undefined {
  const authorization = headers.authorization;
  return authorization?.startsWith('Bearer ') ? authorization.slice(7).trim() : undefined;
}

/** Whether the request carries `Authorization: Bearer <token>`; always true when no token is required. */
export function carriesToken(headers: IncomingHttpHeaders, token: string | undefined): boolean {
  if (!token) return true;
  const given = bearerToken(headers);
  return given !== undefined && sameSecret(given, token);
}

/** The refusal of `/metrics` to a caller without GW_METRICS_TOKEN. */
export function metricsTokenRequired(): GatewayError {
  return new GatewayError({
    type: 'unauthorized',
    message: '/metrics needs Authorization: Bearer <GW_METRICS_TOKEN>',
  });
}
