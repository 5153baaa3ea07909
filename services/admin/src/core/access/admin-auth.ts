import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError, sameSecret } from '@gw/shared';

export interface AdminAuthOptions {
  /** GATEWAY_ADMIN_TOKEN; Bearer it acts as Admin. */
  adminToken?: string | undefined;
  /** The operator opened /api/* to anonymous callers on purpose (client.allow_anonymous_admin). */
  allowAnonymous: boolean;
}

/**
 * Who calls the admin API, as modules see it: `admin` (the bootstrap token, or a token of the built-in Admin
 * role), `member` (any other role: permissions are checked before a module runs, admin-principal.ts), or
 * `anonymous` (allowed only by `client.allow_anonymous_admin`). Only `admin` may add stdio MCP clients.
 */
export type AdminRole = 'admin' | 'member' | 'anonymous';

/** Throws 401/403 unless the caller may use the admin API. Never open to anonymous callers by default. */
export function authorizeAdmin(headers: IncomingHttpHeaders, options: AdminAuthOptions): AdminRole {
  if (options.allowAnonymous) {
    const given = headers.authorization?.startsWith('Bearer ') ? headers.authorization.slice(7).trim() : '';
    return options.adminToken && given && sameSecret(given, options.adminToken) ? 'admin' : 'anonymous';
  }
  if (!options.adminToken) {
    throw new GatewayError({
      type: 'forbidden',
      message:
        'the admin API is disabled: set GATEWAY_ADMIN_TOKEN (or client.allow_anonymous_admin in the config)',
    });
  }
  const authorization = headers.authorization;
  if (!authorization?.startsWith('Bearer ')) {
    throw new GatewayError({
      type: 'unauthorized',
      message: 'send the admin token as Authorization: Bearer <token>',
    });
  }
  if (!sameSecret(authorization.slice(7).trim(), options.adminToken)) {
    throw new GatewayError({ type: 'unauthorized', message: 'the admin token is not valid' });
  }
  return 'admin';
}
