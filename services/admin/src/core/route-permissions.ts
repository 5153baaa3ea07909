import type { Permission } from './permissions.ts';

/**
 * The one table of what every `/api` route needs: a row is `METHOD[|METHOD…] /path` (path after `/api`,
 * `:name` matches one segment) and the permission it requires. A module added to the admin app adds its rows
 * here; the role matrix test (route-permissions.test.ts) fails when a mounted resource has none. A request no
 * row matches (a method a path does not take, a path that does not exist) needs every permission: only Admin
 * gets through, to the module's own 404 or 405.
 */
export interface RoutePermission {
  route: string;
  permission: Permission;
  /**
   * Virtual-key routes: a team-scoped role (Developer) acts on keys of its teams only (team-scope.ts); `owner`:
   * a write of another governance owner (team, customer, business unit, user), kept within its teams
   * (owner-scope.ts).
   */
  scope?: 'virtual-key-list' | 'virtual-key-create' | 'virtual-key' | 'owner';
}

/** The standard rows of a governance collection; owners' usage reads need `budgets:read`. */
function governanceRows(collection: string, resource: 'keys' | 'teams' | 'customers' | 'providers') {
  const base = `/governance/${collection}`;
  const keyed = collection === 'virtual-keys';
  const owner = ['teams', 'customers', 'business-units', 'users'].includes(collection);
  const rows: RoutePermission[] = [
    { route: `GET ${base}`, permission: `${resource}:read`, ...(keyed && { scope: 'virtual-key-list' }) },
    {
      route: `POST ${base}`,
      permission: `${resource}:write`,
      ...(keyed && { scope: 'virtual-key-create' }),
      ...(owner && { scope: 'owner' }),
    },
    { route: `GET ${base}/:id`, permission: `${resource}:read`, ...(keyed && { scope: 'virtual-key' }) },
    {
      route: `PUT|PATCH|DELETE ${base}/:id`,
      permission: `${resource}:write`,
      ...(keyed && { scope: 'virtual-key' }),
      ...(owner && { scope: 'owner' }),
    },
    { route: `GET ${base}/:id/usage`, permission: 'budgets:read', ...(keyed && { scope: 'virtual-key' }) },
    {
      route: `POST ${base}/:id/rotate`,
      permission: `${resource}:write`,
      ...(keyed && { scope: 'virtual-key' }),
    },
  ];
  return rows;
}

/** Standard rows of a collection at `/{resource}` and `/{resource}/:id`. */
function crudRows(path: string, resource: 'users' | 'roles' | 'tokens' | 'providers'): RoutePermission[] {
  return [
    { route: `GET ${path}`, permission: `${resource}:read` },
    { route: `POST ${path}`, permission: `${resource}:write` },
    { route: `GET ${path}/:id`, permission: `${resource}:read` },
    { route: `PUT|PATCH|DELETE ${path}/:id`, permission: `${resource}:write` },
  ];
}

export const ROUTE_PERMISSIONS: readonly RoutePermission[] = [
  ...crudRows('/providers', 'providers'),
  // A real upstream call on the key (it spends a token): a change's permission, not a read's.
  { route: 'POST /providers/:name/keys/:key/test', permission: 'providers:write' },
  ...governanceRows('virtual-keys', 'keys'),
  ...governanceRows('teams', 'teams'),
  ...governanceRows('customers', 'customers'),
  ...governanceRows('business-units', 'customers'),
  // Governance users are budget owners, not people who sign in to the admin API (those are /api/users).
  ...governanceRows('users', 'customers'),
  ...governanceRows('model-aliases', 'providers'),
  { route: 'GET /keys', permission: 'keys:read', scope: 'virtual-key-list' },
  { route: 'POST /keys', permission: 'keys:write', scope: 'virtual-key-create' },
  { route: 'GET /keys/:id', permission: 'keys:read', scope: 'virtual-key' },
  { route: 'PUT|PATCH|DELETE /keys/:id', permission: 'keys:write', scope: 'virtual-key' },
  { route: 'GET /keys/:id/usage', permission: 'budgets:read', scope: 'virtual-key' },
  { route: 'POST /keys/:id/rotate', permission: 'keys:write', scope: 'virtual-key' },
  { route: 'GET /mcp/clients', permission: 'mcp:read' },
  { route: 'POST /mcp/client', permission: 'mcp:write' },
  { route: 'GET /mcp/client/:name', permission: 'mcp:read' },
  { route: 'PUT|PATCH|DELETE /mcp/client/:name', permission: 'mcp:write' },
  { route: 'POST /mcp/client/:name/reconnect', permission: 'mcp:write' },
  { route: 'GET /health/providers', permission: 'health:read' },
  { route: 'GET /load-balancer/config', permission: 'health:read' },
  { route: 'PUT /load-balancer/config', permission: 'health:write' },
  { route: 'GET /config', permission: 'config:read' },
  { route: 'PUT /config', permission: 'config:write' },
  { route: 'GET /guardrails/profiles', permission: 'guardrails:read' },
  { route: 'POST /guardrails/profiles', permission: 'guardrails:write' },
  { route: 'GET /guardrails/profiles/:id', permission: 'guardrails:read' },
  { route: 'PUT|DELETE /guardrails/profiles/:id', permission: 'guardrails:write' },
  { route: 'GET /guardrails/rules', permission: 'guardrails:read' },
  { route: 'POST /guardrails/rules', permission: 'guardrails:write' },
  { route: 'GET /guardrails/rules/:id', permission: 'guardrails:read' },
  { route: 'PUT|DELETE /guardrails/rules/:id', permission: 'guardrails:write' },
  { route: 'GET /enterprise/guardrails/providers', permission: 'guardrails:read' },
  { route: 'POST /enterprise/guardrails/providers', permission: 'guardrails:write' },
  { route: 'DELETE /cache/scopes/:scope', permission: 'cache:write' },
  { route: 'DELETE /cache/scopes/:scope/entries/:id', permission: 'cache:write' },
  { route: 'DELETE /cache/scopes/:scope/keys/:key', permission: 'cache:write' },
  { route: 'GET /logs', permission: 'logs:read' },
  { route: 'GET /logs/:id', permission: 'logs:read' },
  { route: 'GET /alerts/:collection', permission: 'alerts:read' },
  { route: 'POST /alerts/rules', permission: 'alerts:write' },
  { route: 'POST /alerts/channels', permission: 'alerts:write' },
  { route: 'GET /alerts/:collection/:id', permission: 'alerts:read' },
  { route: 'PUT|PATCH|DELETE /alerts/:collection/:id', permission: 'alerts:write' },
  { route: 'POST /alerts/channels/:id/test', permission: 'alerts:write' },
  { route: 'GET /vault/secrets', permission: 'vault:read' },
  { route: 'POST /vault/refresh', permission: 'vault:write' },
  ...crudRows('/users', 'users'),
  ...crudRows('/roles', 'roles'),
  { route: 'GET /tokens', permission: 'tokens:read' },
  { route: 'POST /tokens', permission: 'tokens:write' },
  { route: 'GET /tokens/:id', permission: 'tokens:read' },
  { route: 'DELETE /tokens/:id', permission: 'tokens:write' },
  // The audit log is read-only: /audit-logs/export, /verify and /{seq} are one row.
  { route: 'GET /audit-logs', permission: 'audit:read' },
  { route: 'GET /audit-logs/:seq', permission: 'audit:read' },
];

/**
 * Routes every authenticated caller may use whatever their role (no permission row): who they are, for the web
 * UI (`GET /whoami`). Without a credential they are 401 like every route.
 */
export const OPEN_ROUTES: readonly string[] = ['GET /whoami'];

/** Whether a request is one of OPEN_ROUTES. */
export function isOpenRoute(method: string, segments: readonly string[]): boolean {
  const wanted = method === 'HEAD' ? 'GET' : method;
  return OPEN_ROUTES.includes(`${wanted} /${segments.join('/')}`);
}

interface CompiledRow extends RoutePermission {
  methods: string[];
  segments: string[];
}

const COMPILED: CompiledRow[] = ROUTE_PERMISSIONS.map((row) => {
  const [methods = '', path = ''] = row.route.split(' ');
  return { ...row, methods: methods.split('|'), segments: path.split('/').filter(Boolean) };
});

/** The row of a request (HEAD counts as GET), or undefined when no row declares it. */
export function routePermission(method: string, segments: readonly string[]): RoutePermission | undefined {
  const wanted = method === 'HEAD' ? 'GET' : method;
  return COMPILED.find(
    (row) =>
      row.methods.includes(wanted) &&
      row.segments.length === segments.length &&
      row.segments.every((part, index) => part.startsWith(':') || part === segments[index]),
  );
}
