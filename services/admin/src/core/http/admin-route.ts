// The shapes every admin route module shares: a request as a handler sees it, its result, and the row that
// declares a route. Nothing here imports a module, so modules, the route table and the express chain all can.
import type { AdminRole } from '../access/admin-auth.ts';
import type { Principal } from '../access/admin-principal.ts';
import type { Permission } from '../access/permissions.ts';
import type { TeamScope } from '../access/team-scope.ts';

/** A request as a route's handler sees it; `Params` are its path's parameters (PathParams). */
export interface AdminRequest<Params = unknown> {
  method: string;
  /** Who is calling, as a module needs it: only `admin` may run commands (stdio MCP clients). */
  role: AdminRole;
  /** The caller in full (role, permissions, teams); set for every request the admin app dispatches. */
  principal?: Principal | undefined;
  /** Path segments after /api/, decoded. */
  segments: string[];
  /** The route's path parameters, decoded. */
  params: Params;
  /** The path as sent, for error messages. */
  path: string;
  /** The query string's parameters (always set by `handle`; handlers' unit tests may leave it out). */
  query?: URLSearchParams;
  /** The `Accept` header, for a route that answers another format than JSON when asked (`/api/spend`'s CSV). */
  accept?: string | undefined;
  body: () => Promise<Record<string, unknown>>;
}

export type AdminResult = {
  status: number;
  body: unknown;
  /**
   * An answer written as it is produced instead of `body` (an export's JSON lines), never held whole. It is not
   * redacted for Viewers as JSON bodies are: a module streams only what every holder of the route's permission
   * may read.
   */
  stream?: { contentType: string; chunks: AsyncIterable<string> } | undefined;
};

/** The methods an admin route may take; a route that answers GET answers HEAD too (express does). */
export const ROUTE_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type RouteMethod = (typeof ROUTE_METHODS)[number];

/** The parameters a path pattern names: `{ id: string }` of `/keys/:id`. */
export type PathParams<Path extends string> = Path extends `${infer Head}/${infer Tail}`
  ? PathParams<Head> & PathParams<Tail>
  : Path extends `:${infer Name}`
    ? Record<Name, string>
    : unknown;

/**
 * One route of `/api`: everything the admin app needs to serve it, authorize it and say what it is. The rows are
 * the one declaration: express mounts them, the permission check reads them, 404, 405 and `Allow` come from them,
 * and the role matrix test (route-table.test.ts) runs every row against every role.
 */
export interface AdminRoute<Path extends string = string> {
  method: RouteMethod;
  /** The path after `/api`: literal segments and `:name` parameters (one segment each), as express reads it. */
  path: Path;
  /** The permission a caller needs; `open`: every authenticated caller, whatever their role (`GET /whoami`). */
  permission: Permission | 'open';
  /** How a team-scoped role (Developer) is kept within its teams on this route (team-scope.ts). */
  scope?: TeamScope | undefined;
  handle(request: AdminRequest<PathParams<Path>>): Promise<AdminResult>;
}

/** A row, its handler's `params` typed from its path. */
export const route = <const Path extends string>(row: AdminRoute<Path>): AdminRoute => row;
