import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError, sameSecret } from '@gw/shared';
import type { Principal, SessionAuthenticator } from '../access/admin-principal.ts';
import type { AdminUser, IdentityStore } from '../access/identity-store.ts';
import { heldPermissions, type RoleDefinition } from '../access/permissions.ts';
import { highestRole } from '../access/role-mapping.ts';
import { readCookie, SESSION_COOKIE } from './sso-cookies.ts';
import type { SsoSession, SsoStore } from './sso-store.ts';

/** The header a change made with the session cookie carries (the session's `csrf_token`). */
const CSRF_HEADER = 'x-csrf-token';

/** Methods that change nothing: they need no CSRF token. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const unauthorized = (message: string) =>
  new GatewayError({ type: 'unauthorized', code: 'session_invalid', message });

/** A live session: its cookie's value, the session, its user as stored now, and the role they act with. */
export interface ActiveSession {
  id: string;
  session: SsoSession;
  user: AdminUser;
  role: RoleDefinition;
}

/**
 * The session of a request's `gw_session` cookie, read from the store at every request: undefined without
 * the cookie; a 401 when the session is unknown, ended or expired, or its user is deleted, deactivated or
 * holds no role that exists. The role is the highest of the user's current roles (a change of roles through
 * `/api/users` or SCIM applies at the next request, on every replica).
 */
export async function activeSession(
  headers: IncomingHttpHeaders,
  options: { sessions: SsoStore; identities: IdentityStore; now?: number },
): Promise<ActiveSession | undefined> {
  const id = readCookie(headers, SESSION_COOKIE);
  if (id === undefined) return undefined;
  const session = await options.sessions.findSession(id, options.now);
  if (session === undefined)
    throw unauthorized(
      `the session of the ${SESSION_COOKIE} cookie is unknown or ended; sign in again at /auth/oidc/login`,
    );
  if (session === 'expired')
    throw unauthorized(
      `the session of the ${SESSION_COOKIE} cookie expired; sign in again at /auth/oidc/login`,
    );
  const user = await options.identities.getUser(session.user_id);
  if (!user?.active) throw unauthorized(`the session's user ${session.user_id} is deactivated or deleted`);
  const roles: RoleDefinition[] = [];
  for (const roleId of user.roles) {
    const role = await options.identities.getRole(roleId);
    if (role) roles.push(role);
  }
  const role = highestRole(roles);
  if (!role)
    throw unauthorized(`the session's user ${user.id} holds no role that exists (${user.roles.join(', ')})`);
  return { id, session, user, role };
}

/** 403 unless a change made with the session cookie carries the session's CSRF token. */
export function checkCsrf(headers: IncomingHttpHeaders, method: string, session: SsoSession): void {
  if (SAFE_METHODS.has(method.toUpperCase())) return;
  const given = headers[CSRF_HEADER];
  if (typeof given === 'string' && sameSecret(given, session.csrf_token)) return;
  throw new GatewayError({
    type: 'forbidden',
    code: 'csrf_token',
    message: `${method} with the ${SESSION_COOKIE} cookie needs the header ${CSRF_HEADER}: the csrf_token of GET /auth/session${given === undefined ? '' : ' (the one sent is not it)'}`,
  });
}

/**
 * The session cookie as a credential of `/api` (admin-principal.ts): a request with an `Authorization`
 * header is left to it and its cookie ignored (API clients are never affected by a browser's cookie); one with
 * only the cookie acts as the session's user, and a change needs `x-csrf-token`.
 */
export function createSessionAuthenticator(options: {
  sessions: SsoStore;
  identities: IdentityStore;
}): SessionAuthenticator {
  return {
    async principal(headers, request) {
      if (headers.authorization !== undefined) return undefined;
      const active = await activeSession(headers, options);
      if (!active) return undefined;
      checkCsrf(headers, request.method, active.session);
      return sessionPrincipal(active);
    },
  };
}

function sessionPrincipal({ user, role }: ActiveSession): Principal {
  return {
    kind: 'session',
    roleId: role.id,
    role: role.id === 'admin' ? 'admin' : 'member',
    permissions: heldPermissions(role),
    teamScoped: role.team_scoped,
    teamIds: user.team_ids,
    userId: user.id,
    label: `session:${user.id}`,
  };
}
