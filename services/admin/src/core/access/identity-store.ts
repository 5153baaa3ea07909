import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from '@gw/shared';
import type { Store } from '@gw/shared/store';
import { z } from 'zod';
import { builtInRole, isPermission, type Permission, type RoleDefinition } from './permissions.ts';

/**
 * People and credentials of the admin API, in the state store (every replica reads the same documents, so a
 * revoked token or a deactivated user is refused by every replica at its next request).
 */
const USERS = 'admin-users';
/** Tokens by the SHA-256 of their value: the value itself is never stored. */
const TOKENS = 'admin-tokens';
/** Last-used times, apart from the tokens so that a late write can never bring back a revoked token. */
const TOKEN_USAGE = 'admin-token-usage';
const ROLES = 'admin-roles';

/** The prefix of an admin API token's value (so that a leaked one is recognisable in a scan). */
const ADMIN_TOKEN_PREFIX = 'gwat_';

/** How often at most a replica records a token's last use. */
const LAST_USED_EVERY_MS = 60_000;

export const userSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string(),
  roles: z.array(z.string()),
  team_ids: z.array(z.string()),
  active: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
  /** Who made the user: `scim` (provisioned), `oidc` (a first single sign-on); absent: `/api/users`. */
  source: z.enum(['api', 'scim', 'oidc']).optional(),
  /** SCIM: the provisioning client's id of the person, their userName when it is not their email, their names. */
  external_id: z.string().optional(),
  user_name: z.string().optional(),
  given_name: z.string().optional(),
  family_name: z.string().optional(),
  /** SCIM: the other attributes the client sent (title, phone numbers, enterprise attributes…), kept as sent. */
  scim_attributes: z.record(z.string(), z.unknown()).optional(),
});
export type AdminUser = z.infer<typeof userSchema>;

export const tokenSchema = z.object({
  id: z.string(),
  name: z.string(),
  role: z.string(),
  user_id: z.string().optional(),
  /** The first characters of the value, for people to tell tokens apart. */
  prefix: z.string(),
  created_at: z.string(),
  created_by: z.string(),
  expires_at: z.string().optional(),
});
export type AdminToken = z.infer<typeof tokenSchema>;

const usageSchema = z.object({ last_used_at: z.string() });

const customRoleSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  permissions: z.array(z.string()),
  team_scoped: z.boolean(),
});

const hashToken = (value: string) => createHash('sha256').update(value).digest('hex');

export class IdentityStore {
  private readonly lastWritten = new Map<string, number>();
  private readonly options: { store: Store; logger: Logger };

  constructor(options: { store: Store; logger: Logger }) {
    this.options = options;
  }

  private get store() {
    return this.options.store;
  }

  async listUsers(): Promise<AdminUser[]> {
    return (await this.store.list(USERS)).map((entry) => userSchema.parse(entry.value));
  }

  async getUser(id: string): Promise<AdminUser | undefined> {
    const value = await this.store.get(USERS, id);
    return value === undefined ? undefined : userSchema.parse(value);
  }

  /** The user of an email address (any case), if one has it. */
  async findUserByEmail(email: string): Promise<AdminUser | undefined> {
    const wanted = email.toLowerCase();
    return (await this.listUsers()).find((user) => user.email.toLowerCase() === wanted);
  }

  putUser(user: AdminUser): Promise<void> {
    return this.store.put(USERS, user.id, user);
  }

  async deleteUser(id: string): Promise<boolean> {
    const deleted = await this.store.delete(USERS, id);
    // A deleted user's tokens go with them.
    for (const token of await this.listTokens()) if (token.user_id === id) await this.revokeToken(token.id);
    return deleted;
  }

  /** Custom roles (built-in ones are not stored). */
  async listCustomRoles(): Promise<RoleDefinition[]> {
    return (await this.store.list(ROLES)).map((entry) => asRole(customRoleSchema.parse(entry.value)));
  }

  /** A built-in or a custom role. */
  async getRole(id: string): Promise<RoleDefinition | undefined> {
    const builtIn = builtInRole(id);
    if (builtIn) return builtIn;
    const value = await this.store.get(ROLES, id);
    return value === undefined ? undefined : asRole(customRoleSchema.parse(value));
  }

  putRole(role: RoleDefinition): Promise<void> {
    const { built_in: _builtIn, ...stored } = role;
    return this.store.put(ROLES, role.id, stored);
  }

  deleteRole(id: string): Promise<boolean> {
    return this.store.delete(ROLES, id);
  }

  /** Creates a token; its value is in the answer only. */
  async createToken(
    fields: Omit<AdminToken, 'id' | 'prefix' | 'created_at'>,
  ): Promise<{ token: AdminToken; value: string }> {
    const value = `${ADMIN_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
    const token: AdminToken = {
      id: `tok_${randomBytes(8).toString('hex')}`,
      prefix: value.slice(0, ADMIN_TOKEN_PREFIX.length + 4),
      created_at: new Date().toISOString(),
      ...fields,
    };
    await this.store.put(TOKENS, hashToken(value), token);
    return { token, value };
  }

  async listTokens(): Promise<Array<AdminToken & { last_used_at?: string }>> {
    const usage = new Map(
      (await this.store.list(TOKEN_USAGE)).map((entry) => [
        entry.id,
        usageSchema.parse(entry.value).last_used_at,
      ]),
    );
    return (await this.store.list(TOKENS)).map((entry) => {
      const token = tokenSchema.parse(entry.value);
      const lastUsed = usage.get(token.id);
      return lastUsed ? { ...token, last_used_at: lastUsed } : token;
    });
  }

  /** Deletes the token: the next request with it is a 401 on every replica. */
  async revokeToken(id: string): Promise<boolean> {
    for (const entry of await this.store.list(TOKENS)) {
      if (tokenSchema.parse(entry.value).id !== id) continue;
      await this.store.delete(TOKENS, entry.id);
      await this.store.delete(TOKEN_USAGE, id);
      return true;
    }
    return false;
  }

  /** The token of a value, read from the store at every request (revocation is immediate). */
  async findToken(value: string): Promise<AdminToken | undefined> {
    const stored = await this.store.get(TOKENS, hashToken(value));
    return stored === undefined ? undefined : tokenSchema.parse(stored);
  }

  /** Records a use; writes at most once a minute per token and replica, never waited for. */
  touchToken(id: string, now = Date.now()): void {
    const last = this.lastWritten.get(id);
    if (last !== undefined && now - last < LAST_USED_EVERY_MS) return;
    this.lastWritten.set(id, now);
    this.store
      .put(TOKEN_USAGE, id, { last_used_at: new Date(now).toISOString() })
      .catch((error: unknown) =>
        this.options.logger.warn({ err: error }, 'admin token: last use not recorded'),
      );
  }
}

function asRole(stored: z.infer<typeof customRoleSchema>): RoleDefinition {
  // Permissions were validated on write; one that a later version no longer knows grants nothing.
  const permissions = stored.permissions.filter(isPermission) as Permission[];
  return { ...stored, permissions, built_in: false };
}
