import { type GatewayError, methodNotAllowed, noEndpoint } from '@gw/shared';
import { isPermission } from '../access/permissions.ts';
import { type AdminRoute, ROUTE_METHODS, type RouteMethod } from './admin-route.ts';

export interface RouteMatch {
  route: AdminRoute;
  /** The path's parameters by name, decoded. */
  params: Record<string, string>;
}

const SEGMENT = /^(?:[a-z0-9][a-z0-9-]*|:[a-zA-Z]\w*)$/;

/** `A`, `A or B`, `A, B or C`: how 405 answers name the methods a path takes. */
const spoken = (methods: readonly string[]) =>
  methods.length < 2 ? methods.join('') : `${methods.slice(0, -1).join(', ')} or ${methods.at(-1)}`;

/**
 * The compiled rows. Refuses (throws at start) a row without a known permission, a path express would read
 * otherwise than this table does, and two rows of one method and path shape.
 */
export function createRouteTable(routes: readonly AdminRoute[]) {
  const compiled = routes.map((route) => {
    const where = `admin route ${route.method} ${route.path}`;
    if (!(ROUTE_METHODS as readonly string[]).includes(route.method))
      throw new Error(`${where}: ${route.method} is not one of ${ROUTE_METHODS.join(', ')}`);
    if (route.permission !== 'open' && !isPermission(String(route.permission)))
      throw new Error(`${where} declares no permission: name one of permissions.ts, or 'open'`);
    const segments = route.path.split('/').slice(1);
    if (!route.path.startsWith('/') || !segments.every((segment) => SEGMENT.test(segment)))
      throw new Error(`${where}: a path is /-separated lowercase words and :parameters`);
    return { route, segments };
  });
  const shapes = new Set<string>();
  for (const { route, segments } of compiled) {
    const shape = `${route.method} /${segments.map((segment) => (segment.startsWith(':') ? ':' : segment)).join('/')}`;
    if (shapes.has(shape)) throw new Error(`admin route ${route.method} ${route.path} is declared twice`);
    shapes.add(shape);
  }

  function paramsOf(pattern: readonly string[], segments: readonly string[]) {
    if (pattern.length !== segments.length) return undefined;
    const params: Record<string, string> = {};
    for (const [index, part] of pattern.entries()) {
      if (part.startsWith(':')) params[part.slice(1)] = segments[index]!;
      else if (part !== segments[index]) return undefined;
    }
    return params;
  }

  /** The methods the table has for a path, in ROUTE_METHODS order. */
  function methodsAt(segments: readonly string[]): RouteMethod[] {
    const found = new Set(
      compiled.filter((row) => paramsOf(row.segments, segments)).map((row) => row.route.method),
    );
    return ROUTE_METHODS.filter((method) => found.has(method));
  }

  return {
    routes,
    /** The row of a request (HEAD is GET's) and its parameters; the first of declaration order, as in express. */
    match(method: string, segments: readonly string[]): RouteMatch | undefined {
      const wanted = method === 'HEAD' ? 'GET' : method;
      for (const row of compiled) {
        if (row.route.method !== wanted) continue;
        const params = paramsOf(row.segments, segments);
        if (params) return { route: row.route, params };
      }
      return undefined;
    },
    /** Whether any row's path begins with this segment (`/api/{first}` is a resource of the API). */
    serves: (first: string | undefined) => compiled.some((row) => row.segments[0] === first),
    /**
     * The answer to a request no row takes: 405 naming the methods the path takes (and the `Allow` header's
     * value), or 404 when no row has the path.
     */
    refusal(
      method: string,
      path: string,
      segments: readonly string[],
    ): { error: GatewayError; allow?: string } {
      const methods = methodsAt(segments);
      if (methods.length === 0) return { error: noEndpoint(method, path) };
      return {
        error: methodNotAllowed({ method, path, allowed: spoken(methods) }),
        allow: methods.flatMap((each) => (each === 'GET' ? ['GET', 'HEAD'] : [each])).join(', '),
      };
    },
  };
}

export type RouteTable = ReturnType<typeof createRouteTable>;
