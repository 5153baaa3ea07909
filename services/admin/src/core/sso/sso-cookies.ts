import type { IncomingHttpHeaders } from 'node:http';

/** The session cookie: its value is the session's id, which the store keeps only as a SHA-256 hash. */
export const SESSION_COOKIE = 'gw_session';
/** The state of a sign-in under way, tying the provider's answer to the browser that started it. */
export const STATE_COOKIE = 'gw_oidc_state';

/** The first value of a cookie of the `Cookie` header, or undefined. */
export function readCookie(headers: IncomingHttpHeaders, name: string): string | undefined {
  const header = headers.cookie;
  if (!header) return undefined;
  for (const pair of header.split(';')) {
    const equals = pair.indexOf('=');
    if (equals === -1 || pair.slice(0, equals).trim() !== name) continue;
    const value = pair.slice(equals + 1).trim();
    return value.startsWith('"') && value.endsWith('"') && value.length >= 2 ? value.slice(1, -1) : value;
  }
  return undefined;
}

export interface CookieOptions {
  path: string;
  /** Seconds; 0 removes the cookie. */
  maxAgeSeconds: number;
  /** Sent over HTTPS only (when people reach the admin over HTTPS). */
  secure: boolean;
}

/**
 * A `Set-Cookie` value: HttpOnly (scripts of the page cannot read it) and SameSite=Lax (sent on the provider's
 * top-level redirect back, never on another site's POST). Values are base64url, which needs no quoting.
 */
export function serializeCookie(name: string, value: string, options: CookieOptions): string {
  const parts = [
    `${name}=${value}`,
    `Path=${options.path}`,
    `Max-Age=${options.maxAgeSeconds}`,
    'HttpOnly',
    'SameSite=Lax',
  ];
  if (options.secure) parts.push('Secure');
  return parts.join('; ');
}
