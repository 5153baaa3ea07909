import { randomBytes } from 'node:crypto';
import { GatewayError, invalidRequest, notFound, validate } from '@gw/shared';
import type { CreatedToken } from '../../api-types.ts';
import type { Principal } from '../access/admin-principal.ts';
import {
  roleSchema,
  tokenCreateSchema,
  userCreateSchema,
  userPatchSchema,
} from '../access/identity-input.ts';
import type { AdminUser, IdentityStore } from '../access/identity-store.ts';
import {
  ADMIN_ONLY_PERMISSIONS,
  BUILT_IN_ROLES,
  isPermission,
  PERMISSIONS,
  type RoleDefinition,
} from '../access/permissions.ts';
import type { AdminRequest, AdminResult } from '../http/admin-route.ts';
import { type AdminRoute, route } from '../http/admin-route.ts';

export interface IdentityAdminOptions {
  /** Absent in a cluster admin without a store: every call answers 503. */
  identities?: IdentityStore | undefined;
  /** Whether a governance team of that id exists (a user's `team_ids` must name teams). */
  teamExists?: (id: string) => Promise<boolean>;
}

function withoutFlag(role: RoleDefinition) {
  const { built_in: _builtIn, ...fields } = role;
  return fields;
}

function principalOf(request: AdminRequest): Principal {
  if (request.principal) return request.principal;
  throw new GatewayError({ type: 'internal_error', message: 'the admin request has no principal' });
}

/** Nobody hands out more than they hold: a role given to a user or token, or made, is within the caller's. */
function refuseEscalation(
  principal: Principal,
  role: Pick<RoleDefinition, 'id' | 'permissions'>,
  field: string,
) {
  const beyond = role.permissions.filter((permission) => !principal.permissions.has(permission));
  if (beyond.length === 0) return;
  throw new GatewayError({
    type: 'forbidden',
    code: 'missing_permission',
    param: field,
    message: `${field}: role '${role.id}' grants ${beyond.join(', ')}, which the caller (role ${principal.roleId}) does not hold`,
  });
}

/** 403 of a team-scoped caller reaching past its teams (the code team scoping of keys answers too). */
function outsideTeams(principal: Principal, field: string, message: string): GatewayError {
  const teams = principal.teamIds.length > 0 ? principal.teamIds.join(', ') : 'none';
  return new GatewayError({
    type: 'forbidden',
    code: 'team_scope',
    param: field,
    message: `${field}: ${message}; role ${principal.roleId} acts within its teams only (yours: ${teams})`,
  });
}

/**
 * A team-scoped caller (with users, tokens or roles permissions) stays within its teams: the people it writes
 * belong to its teams only, and every role it hands out or makes is team-scoped too (a role acting on every
 * team would reach further than the caller does).
 */
const scopeOf = (principal: Principal) => (principal.teamScoped ? new Set(principal.teamIds) : undefined);

function refuseWiderRole(
  principal: Principal,
  role: Pick<RoleDefinition, 'id' | 'team_scoped'>,
  field: string,
) {
  if (principal.teamScoped && !role.team_scoped)
    throw outsideTeams(principal, field, `role '${role.id}' is not narrowed to teams`);
}

function refuseOtherTeams(principal: Principal, teamIds: readonly string[], field: string) {
  const scope = scopeOf(principal);
  if (!scope) return;
  const index = teamIds.findIndex((team) => !scope.has(team));
  if (index !== -1)
    throw outsideTeams(principal, `${field}[${index}]`, `'${teamIds[index]}' is not one of your teams`);
}

/**
 * `/api/users`, `/api/tokens` and `/api/roles` (docs/admin-access.md): people, their admin API tokens and the
 * roles that say what they may do. A token's value is in its create answer only; DELETE revokes it at once.
 */
export function createIdentityAdmin(options: IdentityAdminOptions): AdminRoute[] {
  function identitiesOf(): IdentityStore {
    if (options.identities) return options.identities;
    throw new GatewayError({
      type: 'service_unavailable',
      message: 'users, tokens and roles live in the state store, and this admin has none (REDIS_URL)',
    });
  }

  async function checkedRole(identities: IdentityStore, principal: Principal, id: string, field: string) {
    const role = await identities.getRole(id);
    if (!role) throw invalidRequest(`${field}: no role '${id}' exists (GET /api/roles lists them)`, field);
    refuseEscalation(principal, role, field);
    refuseWiderRole(principal, role, field);
    return role;
  }

  async function checkedUser(request: AdminRequest, existing: AdminUser | undefined): Promise<AdminUser> {
    const identities = identitiesOf();
    const principal = principalOf(request);
    const body = await request.body();
    // PATCH changes what it names; POST and PUT are a whole user (PUT keeps the id and creation time).
    const kept = request.method === 'PATCH' ? existing : undefined;
    const input = kept ? validate(userPatchSchema, body) : validate(userCreateSchema, body);
    if (existing && input.id !== undefined && input.id !== existing.id)
      throw invalidRequest(`id: a user cannot be renamed ('${existing.id}')`, 'id');
    if (input.role !== undefined && input.roles !== undefined)
      throw invalidRequest('roles: send role or roles, not both', 'roles');
    const roles = input.roles ?? (input.role !== undefined ? [input.role] : kept?.roles);
    if (!roles) throw invalidRequest('roles: is required (one role id or more, e.g. ["viewer"])', 'roles');
    for (const [index, role] of roles.entries())
      await checkedRole(identities, principal, role, `roles[${index}]`);
    if (existing) refuseOtherTeams(principal, existing.team_ids, 'team_ids');
    const teamIds = input.team_ids ?? kept?.team_ids ?? [];
    refuseOtherTeams(principal, teamIds, 'team_ids');
    if (input.team_ids && options.teamExists) {
      for (const [index, team] of input.team_ids.entries()) {
        if (!(await options.teamExists(team)))
          throw invalidRequest(
            `team_ids[${index}]: no team '${team}' exists (GET /api/governance/teams)`,
            'team_ids',
          );
      }
    }
    const email = (input.email ?? kept?.email)!.toLowerCase();
    const id = existing?.id ?? input.id ?? `usr_${randomBytes(6).toString('hex')}`;
    const others = (await identities.listUsers()).filter((user) => user.id !== id);
    if (!existing && (await identities.getUser(id)))
      throw new GatewayError({ type: 'conflict', message: `user '${id}' already exists`, param: 'id' });
    if (others.some((user) => user.email === email))
      throw new GatewayError({
        type: 'conflict',
        message: `a user with email ${email} exists`,
        param: 'email',
      });
    const now = new Date().toISOString();
    return {
      // What /api/users does not name (SCIM's fields: external_id, source…) stays as it was.
      ...existing,
      id,
      email,
      name: (input.name ?? kept?.name)!,
      roles,
      team_ids: teamIds,
      active: input.active ?? kept?.active ?? true,
      created_at: existing?.created_at ?? now,
      updated_at: now,
    };
  }

  async function storedUser(id: string): Promise<AdminUser> {
    const existing = await identitiesOf().getUser(id);
    if (!existing) throw notFound(`user '${id}'`);
    return existing;
  }

  /** PUT replaces a user, PATCH changes what it names. */
  async function changeUser(request: AdminRequest<{ id: string }>): Promise<AdminResult> {
    const user = await checkedUser(request, await storedUser(request.params.id));
    await identitiesOf().putUser(user);
    return { status: 200, body: user };
  }

  const userRoutes: AdminRoute[] = [
    {
      method: 'GET',
      path: '/users',
      permission: 'users:read',
      handle: async () => ({ status: 200, body: await identitiesOf().listUsers() }),
    },
    {
      method: 'POST',
      path: '/users',
      permission: 'users:write',
      handle: async (request) => {
        const identities = identitiesOf();
        const user = await checkedUser(request, undefined);
        await identities.putUser(user);
        return { status: 201, body: user };
      },
    },
    route({
      method: 'GET',
      path: '/users/:id',
      permission: 'users:read',
      handle: async ({ params: { id } }) => ({ status: 200, body: await storedUser(id) }),
    }),
    route({ method: 'PUT', path: '/users/:id', permission: 'users:write', handle: changeUser }),
    route({ method: 'PATCH', path: '/users/:id', permission: 'users:write', handle: changeUser }),
    route({
      method: 'DELETE',
      path: '/users/:id',
      permission: 'users:write',
      handle: async (request) => {
        const { id } = request.params;
        const existing = await storedUser(id);
        refuseOtherTeams(principalOf(request), existing.team_ids, 'team_ids');
        await identitiesOf().deleteUser(id);
        return { status: 200, body: { deleted: id } };
      },
    }),
  ];

  async function createToken(request: AdminRequest): Promise<AdminResult> {
    const identities = identitiesOf();
    const principal = principalOf(request);
    const input = validate(tokenCreateSchema, await request.body());
    if (input.expires_at !== undefined && input.expires_in_seconds !== undefined)
      throw invalidRequest(
        'expires_in_seconds: send expires_at or expires_in_seconds, not both',
        'expires_in_seconds',
      );
    const expiresAt =
      input.expires_in_seconds !== undefined
        ? new Date(Date.now() + input.expires_in_seconds * 1000).toISOString()
        : input.expires_at && new Date(input.expires_at).toISOString();
    if (expiresAt !== undefined && Date.parse(expiresAt) <= Date.now())
      throw invalidRequest('expires_at: is in the past', 'expires_at');
    const role = await checkedRole(identities, principal, input.role, 'role');
    if (input.user_id !== undefined) {
      const user = await identities.getUser(input.user_id);
      if (!user) throw invalidRequest(`user_id: no user '${input.user_id}' exists`, 'user_id');
      refuseOtherTeams(principal, user.team_ids, 'user_id.team_ids');
      if (!user.roles.includes(role.id))
        throw invalidRequest(
          `role: user '${user.id}' does not hold role '${role.id}' (${user.roles.join(', ')})`,
          'role',
        );
    } else if (role.team_scoped) {
      throw invalidRequest(`user_id: role '${role.id}' acts for a user's teams; name the user`, 'user_id');
    }
    const { token, value } = await identities.createToken({
      name: input.name,
      role: role.id,
      ...(input.user_id !== undefined && { user_id: input.user_id }),
      ...(expiresAt !== undefined && { expires_at: expiresAt }),
      created_by: principal.label,
    });
    return { status: 201, body: { ...token, token: value } satisfies CreatedToken };
  }

  /**
   * The tokens a caller sees and may revoke. A team-scoped caller reaches only those it could have made: a
   * token of a team-scoped role held by a person whose teams are all the caller's (its own included). Never a
   * token of a role acting on every team, nor one without a person (an Admin's, a Viewer's), which a team's
   * administrator would otherwise read and revoke (issue 42, defect 1).
   */
  async function tokensInReach(principal: Principal) {
    const identities = identitiesOf();
    const tokens = await identities.listTokens();
    const scope = scopeOf(principal);
    if (!scope) return tokens;
    const users = new Map((await identities.listUsers()).map((user) => [user.id, user]));
    const roles = [...BUILT_IN_ROLES, ...(await identities.listCustomRoles())];
    const scopedRoles = new Set(roles.filter((role) => role.team_scoped).map((role) => role.id));
    return tokens.filter((token) => {
      const user = token.user_id === undefined ? undefined : users.get(token.user_id);
      return (
        user !== undefined && scopedRoles.has(token.role) && user.team_ids.every((team) => scope.has(team))
      );
    });
  }

  /** The token of that id within the caller's reach: 404 when there is none, 403 when it is beyond its teams. */
  async function tokenInReach(request: AdminRequest<{ id: string }>) {
    const { id } = request.params;
    const principal = principalOf(request);
    const token = (await tokensInReach(principal)).find((candidate) => candidate.id === id);
    if (token) return token;
    if (!(await identitiesOf().listTokens()).some((candidate) => candidate.id === id))
      throw notFound(`admin token '${id}'`);
    throw outsideTeams(principal, 'id', `token ${id} is not a team-scoped token of a person of your teams`);
  }

  const tokenRoutes: AdminRoute[] = [
    {
      method: 'GET',
      path: '/tokens',
      permission: 'tokens:read',
      handle: async (request) => ({ status: 200, body: await tokensInReach(principalOf(request)) }),
    },
    { method: 'POST', path: '/tokens', permission: 'tokens:write', handle: createToken },
    route({
      method: 'GET',
      path: '/tokens/:id',
      permission: 'tokens:read',
      handle: async (request) => ({ status: 200, body: await tokenInReach(request) }),
    }),
    route({
      method: 'DELETE',
      path: '/tokens/:id',
      permission: 'tokens:write',
      handle: async (request) => {
        const { id } = await tokenInReach(request);
        if (!(await identitiesOf().revokeToken(id))) throw notFound(`admin token '${id}'`);
        return { status: 200, body: { revoked: id } };
      },
    }),
  ];

  /** A custom role from a create or PUT body, or a PATCH merged onto `existing`. */
  async function checkedCustomRole(
    request: AdminRequest,
    existing: RoleDefinition | undefined,
  ): Promise<RoleDefinition> {
    const body = await request.body();
    const base = request.method === 'PATCH' && existing ? withoutFlag(existing) : {};
    const input = validate(roleSchema, existing ? { ...base, ...body, id: existing.id } : body);
    input.permissions.forEach((permission, index) => {
      if (!isPermission(permission))
        throw invalidRequest(
          `permissions[${index}]: '${permission}' is not a permission (known: ${PERMISSIONS.join(', ')})`,
          `permissions[${index}]`,
        );
      if (ADMIN_ONLY_PERMISSIONS.has(permission))
        throw invalidRequest(
          `permissions[${index}]: '${permission}' belongs to the built-in Admin alone; no custom role may hold it`,
          `permissions[${index}]`,
        );
    });
    const role: RoleDefinition = {
      id: input.id,
      name: input.name ?? input.id,
      description: input.description ?? '',
      permissions: [...new Set(input.permissions.filter(isPermission))],
      team_scoped: input.team_scoped ?? false,
      built_in: false,
    };
    refuseEscalation(principalOf(request), role, 'permissions');
    refuseWiderRole(principalOf(request), role, 'team_scoped');
    return role;
  }

  async function storedRole(id: string): Promise<RoleDefinition> {
    const existing = await identitiesOf().getRole(id);
    if (!existing) throw notFound(`role '${id}'`);
    return existing;
  }

  /** A custom role, for a change: a built-in one cannot be changed. */
  async function customRole(id: string): Promise<RoleDefinition> {
    const existing = await storedRole(id);
    if (existing.built_in)
      throw invalidRequest(
        `role '${id}' is built in and cannot be changed; make a custom role instead`,
        'id',
      );
    return existing;
  }

  /** PUT replaces a custom role, PATCH merges into it. */
  async function changeRole(request: AdminRequest<{ id: string }>): Promise<AdminResult> {
    const role = await checkedCustomRole(request, await customRole(request.params.id));
    await identitiesOf().putRole(role);
    return { status: 200, body: role };
  }

  const roleRoutes: AdminRoute[] = [
    {
      method: 'GET',
      path: '/roles',
      permission: 'roles:read',
      handle: async () => ({
        status: 200,
        body: [...BUILT_IN_ROLES, ...(await identitiesOf().listCustomRoles())],
      }),
    },
    {
      method: 'POST',
      path: '/roles',
      permission: 'roles:write',
      handle: async (request) => {
        const identities = identitiesOf();
        const role = await checkedCustomRole(request, undefined);
        if (await identities.getRole(role.id))
          throw new GatewayError({
            type: 'conflict',
            message: `role '${role.id}' already exists`,
            param: 'id',
          });
        await identities.putRole(role);
        return { status: 201, body: role };
      },
    },
    route({
      method: 'GET',
      path: '/roles/:id',
      permission: 'roles:read',
      handle: async ({ params: { id } }) => ({ status: 200, body: await storedRole(id) }),
    }),
    route({ method: 'PUT', path: '/roles/:id', permission: 'roles:write', handle: changeRole }),
    route({ method: 'PATCH', path: '/roles/:id', permission: 'roles:write', handle: changeRole }),
    route({
      method: 'DELETE',
      path: '/roles/:id',
      permission: 'roles:write',
      handle: async ({ params: { id } }) => {
        const identities = identitiesOf();
        await customRole(id);
        const holders = [
          ...(await identities.listUsers())
            .filter((user) => user.roles.includes(id))
            .map((user) => `user ${user.id}`),
          ...(await identities.listTokens())
            .filter((token) => token.role === id)
            .map((token) => `token ${token.id}`),
        ];
        if (holders.length > 0)
          throw new GatewayError({
            type: 'conflict',
            message: `role '${id}' is still held by ${holders.slice(0, 5).join(', ')}; change or delete them first`,
          });
        await identities.deleteRole(id);
        return { status: 200, body: { deleted: id } };
      },
    }),
  ];

  return [...userRoutes, ...tokenRoutes, ...roleRoutes];
}
