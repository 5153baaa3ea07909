import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError, sameSecret } from '@gw/shared';
import { type AdminAuthOptions, type AdminRole, authorizeAdmin } from './admin-auth.ts';
import type { IdentityStore } from './identity-store.ts';
import { ADMIN_ONLY_PERMISSIONS, heldPermissions, PERMISSIONS, type Permission } from './permissions.ts';

/** Who is calling the admin API, and what they may do. */
export interface Principal {
  /** What authenticated them. */
  kind: 'bootstrap' | 'token' | 'session' | 'anonymous';
  /** The role's id (`admin`, `developer`, `viewer` or a custom role's). */
  roleId: string;
  /** Modules' view (AdminRequest.role): only the built-in Admin may run commands (stdio MCP clients). */
  role: AdminRole;
  permissions: ReadonlySet<Permission>;
  /** Acts on virtual keys of `teamIds` only. */
  teamScoped: boolean;
  teamIds: readonly string[];
  userId?: string | undefined;
  tokenId?: string | undefined;
  /** How records name them (`bootstrap`, `token:<id>`, `session:<user id>`, `anonymous`). */
  label: string;
}

const ALL = new Set<Permission>(PERMISSIONS);

const BOOTSTRAP: Principal = {
  kind: 'bootstrap',
  roleId: 'admin',
  role: 'admin',
  permissions: ALL,
  teamScoped: false,
  teamIds: [],
  label: 'bootstrap',
};

/**
 * `client.allow_anonymous_admin`: the operator opened the API on purpose; anonymous callers may not run commands,
 * nor name secret references (Admin-only permissions).
 */
const ANONYMOUS: Principal = {
  ...BOOTSTRAP,
  kind: 'anonymous',
  role: 'anonymous',
  label: 'anonymous',
  permissions: new Set(PERMISSIONS.filter((permission) => !ADMIN_ONLY_PERMISSIONS.has(permission))),
};

/** A credential besides bearer tokens (a single sign-on session cookie). */
export interface SessionAuthenticator {
  /**
   * The principal of the request's session; undefined when it carries none (then bearer tokens are tried);
   * throws the 401 (expired, revoked, user deactivated) or 403 (a change without its CSRF token).
   */
  principal(headers: IncomingHttpHeaders, request: { method: string }): Promise<Principal | undefined>;
}

export interface AuthenticateOptions {
  auth: AdminAuthOptions;
  /** API tokens and users; absent in a cluster admin without a store (only the bootstrap token then). */
  identities: IdentityStore | undefined;
  sessions?: SessionAuthenticator | undefined;
}

const unauthorized = (message: string) => new GatewayError({ type: 'unauthorized', message });

/**
 * The caller of a request: a single sign-on session (its cookie, on a request without an Authorization header), an admin API token of the store, else what `authorizeAdmin` says of the bootstrap
 * GATEWAY_ADMIN_TOKEN (Admin) and `client.allow_anonymous_admin` (anonymous), with its 401 and 403 as before.
 */
export async function authenticate(
  headers: IncomingHttpHeaders,
  options: AuthenticateOptions,
  request: { method: string },
  now = Date.now(),
): Promise<Principal> {
  const { auth, identities } = options;
  const session = await options.sessions?.principal(headers, request);
  if (session) return session;
  const authorization = headers.authorization;
  const given = authorization?.startsWith('Bearer ') ? authorization.slice(7).trim() : undefined;
  const bootstrap =
    given !== undefined && auth.adminToken !== undefined && sameSecret(given, auth.adminToken);
  const token = given && !bootstrap && identities ? await identities.findToken(given) : undefined;
  if (!token || !identities) return authorizeAdmin(headers, auth) === 'admin' ? BOOTSTRAP : ANONYMOUS;
  if (token.expires_at !== undefined && Date.parse(token.expires_at) <= now) {
    throw unauthorized(`the admin token ${token.id} expired at ${token.expires_at}`);
  }
  const user = token.user_id === undefined ? undefined : await identities.getUser(token.user_id);
  if (token.user_id !== undefined && !user?.active) {
    throw unauthorized(`the admin token ${token.id} belongs to a user who is deactivated or deleted`);
  }
  // A user's token acts with its role only while the user holds it (their groups may have taken it away).
  if (user && !user.roles.includes(token.role)) {
    throw unauthorized(
      `the admin token ${token.id} acts as role '${token.role}', which its user ${user.id} no longer holds`,
    );
  }
  const role = await identities.getRole(token.role);
  if (!role) throw unauthorized(`the admin token ${token.id} names a role that no longer exists`);
  identities.touchToken(token.id, now);
  return {
    kind: 'token',
    roleId: role.id,
    role: role.id === 'admin' ? 'admin' : 'member',
    permissions: heldPermissions(role),
    teamScoped: role.team_scoped,
    teamIds: user?.team_ids ?? [],
    userId: user?.id,
    tokenId: token.id,
    label: `token:${token.id}`,
  };
}
