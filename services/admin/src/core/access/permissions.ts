/**
 * What the admin API can grant: a permission is `<resource>:<action>`. `read` covers GET (and HEAD), `write`
 * covers every change. Two permissions are not a resource's: without `secrets:read`, secret fields of read
 * answers are redacted; without `mcp:remote`, `mcp:write` adds http and sse MCP clients only at URLs the config
 * file lists in `network.mcp_remote_urls` (docs/admin-access.md, docs/network.md); `secrets:reference` lets a
 * write name an `env.NAME` or secret-manager reference the config file's `admin.secret_references` allows
 * (secret-policy.ts of @gw/shared), and belongs to Admin alone (docs/admin-access.md).
 */
export const ADMIN_RESOURCES = [
  'providers',
  'keys',
  'teams',
  'customers',
  'budgets',
  'mcp',
  'guardrails',
  'logs',
  'config',
  'users',
  'tokens',
  'roles',
  'audit',
  'cache',
  'health',
  'alerts',
  'vault',
  'routing',
  'pricing',
] as const;

export type AdminResource = (typeof ADMIN_RESOURCES)[number];

export type Permission =
  | `${AdminResource}:${'read' | 'write'}`
  | 'secrets:read'
  | 'mcp:remote'
  | 'secrets:reference';

/** Every permission, in a stable order (the answer of `GET /api/roles` lists them as `known_permissions`). */
export const PERMISSIONS: readonly Permission[] = [
  ...ADMIN_RESOURCES.flatMap((resource) => [`${resource}:read` as const, `${resource}:write` as const]),
  'secrets:read',
  'mcp:remote',
  'secrets:reference',
];

/**
 * Permissions only the built-in Admin holds: no custom role may be given them, and a stored role that names one
 * does not get it (`secrets:reference` makes gw read variables of its environment and send them out).
 */
export const ADMIN_ONLY_PERMISSIONS: ReadonlySet<Permission> = new Set(['secrets:reference']);

/** A stored role's permissions as a principal holds them: Admin-only ones kept for Admin alone. */
export function heldPermissions(role: Pick<RoleDefinition, 'id' | 'permissions'>): Set<Permission> {
  return new Set(
    role.permissions.filter((permission) => role.id === 'admin' || !ADMIN_ONLY_PERMISSIONS.has(permission)),
  );
}

const KNOWN = new Set<string>(PERMISSIONS);

export function isPermission(value: string): value is Permission {
  return KNOWN.has(value);
}

/** A role: a set of permissions; a team-scoped role acts on virtual keys of its holder's teams only. */
export interface RoleDefinition {
  id: string;
  name: string;
  description: string;
  permissions: Permission[];
  team_scoped: boolean;
  built_in: boolean;
}

const READS = PERMISSIONS.filter(
  (permission) => permission.endsWith(':read') && permission !== 'secrets:read',
);

/** Admin, Developer and Viewer (SPEC.md "Authentication" 5); they cannot be changed or deleted. */
export const BUILT_IN_ROLES: readonly RoleDefinition[] = [
  {
    id: 'admin',
    name: 'Admin',
    description: 'everything, secrets included',
    permissions: [...PERMISSIONS],
    team_scoped: false,
    built_in: true,
  },
  {
    id: 'developer',
    name: 'Developer',
    description:
      "manages virtual keys of their teams and MCP tools (stdio clients stay Admin's); reads their teams' keys and logs",
    permissions: [
      'keys:read',
      'keys:write',
      'budgets:read',
      'mcp:read',
      'mcp:write',
      'logs:read',
      'teams:read',
    ],
    team_scoped: true,
    built_in: true,
  },
  {
    id: 'viewer',
    name: 'Viewer',
    description: 'reads everything, secret fields redacted; changes nothing',
    permissions: READS,
    team_scoped: false,
    built_in: true,
  },
];

export function builtInRole(id: string): RoleDefinition | undefined {
  return BUILT_IN_ROLES.find((role) => role.id === id);
}

/** Whether the caller of an admin request may write secret references (`refuseSecretReferences` of @gw/shared). */
export function mayReferenceSecrets(request: {
  role: string;
  principal?: { permissions: ReadonlySet<Permission> } | undefined;
}): boolean {
  return request.principal
    ? request.principal.permissions.has('secrets:reference')
    : request.role === 'admin';
}
