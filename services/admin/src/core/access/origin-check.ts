import type { IncomingMessage } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { GatewayError } from '@gw/shared';

/**
 * Which browser pages may act with an ambient credential (docs/admin-access.md "Origins"). A browser sends the
 * session cookie with every request to the admin, and a WebSocket upgrade is never held back by CORS, so a
 * page of another origin could use a signed-in person's session (or a gateway opened to anonymous callers) if
 * the admin did not look at `Origin`. The admin's own origin (the scheme, host and port its request names) is
 * always allowed; others only when the config file lists them.
 */
export interface OriginPolicy {
  /** Throws 403 `origin_not_allowed` when the request carries an `Origin` that is neither its own nor allowed. */
  check(request: IncomingMessage): void;
}

/** The origin a request was sent to, as a browser on the admin's own pages writes it. */
function ownOrigin(request: IncomingMessage): string | undefined {
  const host = request.headers.host;
  if (!host) return undefined;
  // Behind a proxy that ends TLS, its X-Forwarded-Proto: a page cannot make a browser send that header on an
  // upgrade, nor on a request without a CORS preflight, so it cannot forge its own origin with it.
  const forwarded = String(request.headers['x-forwarded-proto'] ?? '')
    .split(',')[0]!
    .trim()
    .toLowerCase();
  const scheme = (request.socket as TLSSocket).encrypted
    ? 'https'
    : forwarded === 'https' || forwarded === 'http'
      ? forwarded
      : 'http';
  try {
    return new URL(`${scheme}://${host}`).origin;
  } catch {
    return undefined;
  }
}

/** The origin as written, normalised like `URL.origin` (a default port dropped, the host in lowercase). */
function normalised(origin: string): string {
  try {
    return new URL(origin).origin;
  } catch {
    return origin;
  }
}

export function createOriginPolicy(allowedOrigins: readonly string[]): OriginPolicy {
  const allowed = new Set(allowedOrigins.map(normalised));
  return {
    check(request) {
      const origin = request.headers.origin;
      // No Origin: not a browser's cross-origin request (browsers send it on every upgrade and every change).
      if (origin === undefined) return;
      const given = normalised(origin);
      if (given !== 'null' && (given === ownOrigin(request) || allowed.has(given))) return;
      throw new GatewayError({
        type: 'forbidden',
        code: 'origin_not_allowed',
        message: `Origin ${origin.slice(0, 200)} is not this admin's origin${
          ownOrigin(request) ? ` (${ownOrigin(request)})` : ''
        } nor one of admin.allowed_origins: a page of another origin may not act with this credential`,
      });
    },
  };
}
