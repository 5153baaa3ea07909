import { createHash } from 'node:crypto';
import { type AuthConfig, GatewayError } from '@gw/shared';
import type { AdminUser, IdentityStore } from '../access/identity-store.ts';
import type { RoleDefinition } from '../access/permissions.ts';
import { highestRole, mapIdentity } from '../access/role-mapping.ts';

/** A sign-in gw refuses (403): why, in words that name claims but never their values. */
export class LoginRefused extends Error {
  override name = 'LoginRefused';
  /** Who tried, as the audit log names them: `oidc:<email or sub>`. */
  readonly who: string;

  constructor(who: string, message: string) {
    super(message);
    this.who = who;
  }

  toGatewayError(): GatewayError {
    return new GatewayError({ type: 'forbidden', code: 'login_refused', message: this.message });
  }
}

/** The claims gw reads besides those the role mappings name (userinfo is asked when the ID token lacks one). */
const IDENTITY_CLAIMS = ['email'] as const;

/** The claim names (their first dotted step) a sign-in needs: `email` and every rule's claim. */
export function wantedClaims(rules: AuthConfig['role_mappings']): string[] {
  return [...new Set([...IDENTITY_CLAIMS, ...rules.map((rule) => rule.claim.split('.')[0]!)])];
}

/**
 * The id of a user first seen at a sign-in, from their email: two replicas completing someone's first sign-in
 * at once write the same user instead of two.
 */
const userIdOf = (email: string) =>
  `usr_${createHash('sha256').update(`oidc:${email}`).digest('hex').slice(0, 12)}`;

const text = (value: unknown) =>
  typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;

/**
 * The admin user of a signed-in identity (SPEC.md "Authentication" 5): roles and teams from the claims by
 * `auth.role_mappings`, else `auth.default_role`; the user of that email is created or updated with them (a
 * change of groups at the provider applies at the next sign-in). Throws LoginRefused when no role results,
 * the identity has no (verified) email, or its user is deactivated. Answers the user and the role it acts with.
 */
export async function signInUser(options: {
  claims: Record<string, unknown>;
  auth: AuthConfig;
  identities: IdentityStore;
  now?: number;
}): Promise<{ user: AdminUser; role: RoleDefinition }> {
  const { claims, auth, identities } = options;
  const email = text(claims['email'])?.toLowerCase();
  const who = `oidc:${email ?? text(claims['sub']) ?? 'unknown'}`;
  if (!email)
    throw new LoginRefused(
      who,
      'the identity provider sent no email claim (ask for the scope email); gw names admin users by email',
    );
  if (claims['email_verified'] === false)
    throw new LoginRefused(who, `the identity provider says the email ${email} is not verified`);

  const mapped = mapIdentity(claims, auth.role_mappings);
  const roleIds = mapped.roles.length > 0 ? mapped.roles : auth.default_role ? [auth.default_role] : [];
  if (roleIds.length === 0) {
    const checked = [...new Set(auth.role_mappings.map((rule) => rule.claim))];
    throw new LoginRefused(
      who,
      checked.length > 0
        ? `no role mapping matched the identity's claims (checked: ${checked.join(', ')}) and auth.default_role is not set`
        : 'auth.role_mappings is empty and auth.default_role is not set: single sign-on gives nobody a role',
    );
  }
  const roles: RoleDefinition[] = [];
  for (const id of roleIds) {
    const role = await identities.getRole(id);
    if (role) roles.push(role);
  }
  const role = highestRole(roles);
  if (!role)
    throw new LoginRefused(
      who,
      `the roles the mappings give (${roleIds.join(', ')}) do not exist (GET /api/roles lists them)`,
    );

  const existing = (await identities.listUsers()).find((user) => user.email.toLowerCase() === email);
  if (existing && !existing.active)
    throw new LoginRefused(who, `the admin user ${existing.id} (${email}) is deactivated`);
  const now = new Date(options.now ?? Date.now()).toISOString();
  const name = text(claims['name']) ?? text(claims['preferred_username']) ?? existing?.name ?? email;
  const user: AdminUser = {
    id: existing?.id ?? userIdOf(email),
    email,
    name,
    roles: roles.map((held) => held.id),
    team_ids: mapped.roles.length > 0 ? mapped.teamIds : [],
    active: true,
    created_at: existing?.created_at ?? now,
    updated_at: now,
  };
  await identities.putUser(user);
  return { user, role };
}
