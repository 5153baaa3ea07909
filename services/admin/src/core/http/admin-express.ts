import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { GovernanceService } from '@gw/governance';
import {
  drained,
  GatewayError,
  invalidRequest,
  type Logger,
  newRequestId,
  noEndpoint,
  parseJson,
  readBody,
  sendError,
  sendJson,
  throttledLog,
} from '@gw/shared';
import express, { type NextFunction, type Request, type Response, Router } from 'express';
import { type AuthenticateOptions, authenticate, type Principal } from '../access/admin-principal.ts';
import type { OriginPolicy } from '../access/origin-check.ts';
import { ADMIN_ONLY_PERMISSIONS, PERMISSIONS } from '../access/permissions.ts';
import { checkTeamScope } from '../access/team-scope.ts';
import { redactForViewer } from '../access/viewer-redaction.ts';
import type { AuditGate } from '../audit/audit-sink.ts';
import { type AuditTrail, createAuditTrail } from '../audit/audit-trail.ts';
import type { AdminResult, AdminRoute } from './admin-route.ts';
import type { RouteTable } from './route-table.ts';

/** What the middleware learns about a request, kept in `response.locals.admin`. */
interface AdminContext {
  requestId: string;
  /** The path as sent, for error messages. */
  path: string;
  query: URLSearchParams;
  principal?: Principal;
  segments?: string[];
  body: () => Promise<Record<string, unknown>>;
  /** Narrows a list answer (team scoping). */
  filter?: ((body: unknown) => unknown) | undefined;
  /** For the audit trail (audit-trail.ts): the body answered, the error's message, whether it was a refusal. */
  answer?: unknown;
  failure?: string | undefined;
  refused?: boolean | undefined;
  hold?: ((status: number, answer: unknown) => Promise<void>) | undefined;
  held?: boolean | undefined;
}

const contextOf = (response: Response) => response.locals['admin'] as AdminContext;

export interface AdminExpressOptions extends AuthenticateOptions {
  /** The rows of `/api`, mounted on one express Router. */
  routes: RouteTable;
  /**
   * Routers outside `/api` by their mount path (`/auth`, `/scim/v2`): mounted before the `/api` chain, so
   * they authenticate their callers themselves (single sign-on, SCIM's own bearer token).
   */
  routers?: Record<string, Router> | undefined;
  governance: GovernanceService;
  logger: Logger;
  maxBodyBytes: number;
  /** Where changes, refusals (and, through the app's dependencies, logins and SCIM changes) are recorded. */
  audit?: AuditGate | undefined;
  /** Which pages may use an ambient credential (the session cookie, anonymous access) and open upgrades. */
  origins?: OriginPolicy | undefined;
}

/** Answers of these mounts are for one caller at one moment: never kept by a browser or a proxy. */
const UNCACHED = /^\/(api|auth|scim)(\/|$)/;
/** `application/json` or a `+json` type, parameters (charset) aside. */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.-]+\+)?json$/i;

/**
 * A body is parsed only when it says it is JSON: a `text/plain` body (what a cross-site form or a no-cors fetch
 * can send without a preflight) or a form is refused, never guessed at.
 */
function assertJsonContentType(request: IncomingMessage): void {
  const header = request.headers['content-type'];
  const type = (header ?? '').split(';')[0]!.trim();
  if (JSON_MEDIA_TYPE.test(type)) return;
  throw invalidRequest(
    `content-type: '${(header ?? '(none)').slice(0, 100)}' is not JSON; the admin API takes bodies as application/json`,
    'content-type',
  );
}

/** One request's body, read once (a scope check and the handler may both want it), up to the limit. */
function bodyReader(request: IncomingMessage, maxBodyBytes: number) {
  let read: Promise<Record<string, unknown>> | undefined;
  return () => {
    read ??= readBody(request, maxBodyBytes).then((bytes) => {
      if (bytes.length > 0) assertJsonContentType(request);
      const value = parseJson(bytes);
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        throw invalidRequest('request body must be a JSON object');
      }
      return value as Record<string, unknown>;
    });
    return read.then((value) => ({ ...value }));
  };
}

/**
 * A browser's WebSocket cannot send an Authorization header: an upgrade without one may carry the bearer token
 * as the subprotocol `gw-bearer.<token as base64url>` (beside `gw-admin`, the protocol the server picks).
 */
function withProtocolBearer(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  if (headers.authorization !== undefined) return headers;
  const offered = String(headers['sec-websocket-protocol'] ?? '')
    .split(',')
    .map((protocol) => protocol.trim())
    .find((protocol) => protocol.startsWith('gw-bearer.'));
  if (!offered) return headers;
  const token = Buffer.from(offered.slice('gw-bearer.'.length), 'base64url').toString('utf8');
  return { ...headers, authorization: `Bearer ${token}` };
}

/** The segments of a path after `/api/`, decoded (400 when a segment does not decode). */
function pathSegments(path: string): string[] {
  try {
    return path.slice(5).split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    throw invalidRequest(`the path ${path} is not valid`);
  }
}

/** 403 naming the permission a route needs and the caller lacks. */
function missingPermission(principal: Principal, method: string, path: string, permission?: string) {
  return new GatewayError({
    type: 'forbidden',
    code: 'missing_permission',
    message: permission
      ? `${method} ${path} needs the permission ${permission}, which role ${principal.roleId} does not have`
      : `${method} ${path} is declared by no permission row: only Admin may call it`,
  });
}

/**
 * Throws 403 naming the permission unless the principal may call the route. A request no row takes (a method a
 * path does not take, a path that does not exist) needs every permission: only Admin learns it is a 404 or 405.
 */
function permitted(principal: Principal, method: string, path: string, route: AdminRoute | undefined) {
  if (!route) {
    const needed = PERMISSIONS.filter((permission) => !ADMIN_ONLY_PERMISSIONS.has(permission));
    if (!needed.every((permission) => principal.permissions.has(permission)))
      throw missingPermission(principal, method, path);
    return;
  }
  if (route.permission !== 'open' && !principal.permissions.has(route.permission))
    throw missingPermission(principal, method, path, route.permission);
}

/** The resource at a path as its GET row answers it, or undefined when there is none or it is not a 200. */
async function readResource(
  routes: RouteTable,
  target: { principal: Principal; segments: string[]; path: string },
): Promise<unknown> {
  const found = routes.match('GET', target.segments);
  if (!found) return undefined;
  try {
    const result = await found.route.handle({
      method: 'GET',
      role: target.principal.role,
      principal: target.principal,
      segments: target.segments,
      params: found.params,
      path: target.path,
      query: new URLSearchParams(),
      body: async () => ({}),
    });
    return result.status === 200 && result.stream === undefined ? result.body : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The router of `/api`: each row mounted at its method and path, behind its permission and team scope check
 * and the audit trail; a request no row takes is answered 404 or 405 (with `Allow`) from the table.
 */
function apiRouter(options: AdminExpressOptions, trail: AuditTrail | undefined): Router {
  const router = Router({ caseSensitive: true });
  const changes = trail ? [trail.changes] : [];
  for (const route of options.routes.routes) {
    const authorize = async (request: Request, response: Response, next: NextFunction) => {
      const context = contextOf(response);
      const principal = context.principal!;
      permitted(principal, request.method, context.path, route);
      context.filter = await checkTeamScope({
        scope: route.scope,
        principal,
        request: { method: request.method, segments: context.segments!, body: context.body },
        governance: options.governance,
      });
      next();
    };
    const answer = async (request: Request, response: Response) => {
      const context = contextOf(response);
      const result = await route.handle({
        method: request.method,
        role: context.principal!.role,
        principal: context.principal,
        segments: context.segments!,
        params: request.params as Record<string, string>,
        path: context.path,
        query: context.query,
        accept: request.get('accept'),
        body: context.body,
      });
      if (result.stream) return writeStream(response, result, context.requestId);
      let body = context.filter ? context.filter(result.body) : result.body;
      if (route.method === 'GET' && !context.principal!.permissions.has('secrets:read'))
        body = redactForViewer(body);
      context.answer = body;
      // A change is answered once its audit record is held (audit-trail.ts); a failure to hold it is the 503.
      if (context.hold) await context.hold(result.status, body);
      sendJson(response, result.status, body, { 'x-request-id': context.requestId });
    };
    const mount = route.method.toLowerCase() as Lowercase<typeof route.method>;
    router[mount](route.path, authorize, ...changes, answer);
  }
  router.use(
    (request: Request, response: Response, next: NextFunction) => {
      const context = contextOf(response);
      permitted(context.principal!, request.method, context.path, undefined);
      next();
    },
    ...changes,
    (request: Request, response: Response) => {
      const context = contextOf(response);
      const { error, allow } = options.routes.refusal(request.method, context.path, context.segments!);
      if (allow) response.setHeader('allow', allow);
      throw error;
    },
  );
  return router;
}

/**
 * A streamed answer (an export's JSON lines): the first chunk is read before the head is sent, so a failure to
 * start is still an error answer; later chunks wait for the socket to drain, and stop when the caller goes away.
 * A failure after the head ends the connection (the caller sees a cut body, not a last line).
 */
async function writeStream(response: Response, result: AdminResult, requestId: string): Promise<void> {
  const chunks = result.stream!.chunks[Symbol.asyncIterator]();
  let next = await chunks.next();
  response.writeHead(result.status, {
    'content-type': result.stream!.contentType,
    'x-request-id': requestId,
  });
  try {
    while (!next.done && !response.destroyed) {
      if (!response.write(next.value)) await drained(response);
      next = await chunks.next();
    }
    response.end();
  } finally {
    if (!next.done) await chunks.return?.();
  }
}

/**
 * The admin API on express 5 (DESIGN.md §2): context, authentication, path, then the route rows (each behind its
 * permission and team scope), then errors in gw's one error body. Bodies are read by the handlers themselves,
 * lazily, under one limit.
 */
export function createAdminExpress(options: AdminExpressOptions) {
  const app = express();
  const trail =
    options.audit &&
    createAuditTrail({
      sink: options.audit,
      read: (principal, segments, path) => readResource(options.routes, { principal, segments, path }),
      context: contextOf,
    });
  // An outage (the store, Redis, the audit log) fails every request alike: one line per kind and 10 s, then a count.
  const requestFailed = throttledLog(options.logger, 'error');
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('case sensitive routing', true);
  app.set('query parser', false);

  app.use((request: Request, response: Response, next: NextFunction) => {
    const url = request.url;
    const query = url.indexOf('?');
    response.locals['admin'] = {
      requestId: newRequestId(),
      path: query === -1 ? url : url.slice(0, query),
      query: new URLSearchParams(query === -1 ? '' : url.slice(query + 1)),
      body: bodyReader(request, options.maxBodyBytes),
    } satisfies AdminContext;
    if (UNCACHED.test(request.url)) response.setHeader('cache-control', 'no-store');
    next();
  });

  for (const [path, router] of Object.entries(options.routers ?? {})) app.use(path, router);

  app.use(async (request: Request, response: Response, next: NextFunction) => {
    // Without an Authorization header the credential is ambient (the session cookie, or anonymous access):
    // a page of another origin may not use it. A bearer token is not sent by a browser on its own.
    if (request.headers.authorization === undefined) options.origins?.check(request);
    contextOf(response).principal = await authenticate(request.headers, options, {
      method: request.method,
    });
    next();
  });

  // The path as segments, decoded once; the URL is rewritten to its canonical form so that the router matches
  // exactly the resource the segments name (a request under a first segment no row has is a 404 here).
  app.use((request: Request, response: Response, next: NextFunction) => {
    const context = contextOf(response);
    const segments = pathSegments(context.path);
    const name = segments[0];
    if (!options.routes.serves(name)) throw noEndpoint(request.method, context.path);
    context.segments = segments;
    request.url = `/api/${segments.map(encodeURIComponent).join('/')}`;
    next();
  });

  app.use('/api', apiRouter(options, trail));

  app.use((request: Request, response: Response) => {
    throw noEndpoint(request.method, contextOf(response).path);
  });

  app.use((error: unknown, request: Request, response: Response, _next: NextFunction) => {
    const requestId = contextOf(response)?.requestId ?? newRequestId();
    const failure = sendError(response, error, requestId);
    if (failure.status >= 500)
      requestFailed(
        `${failure.status}:${failure.type}:${failure.code ?? ''}`,
        { err: error, requestId },
        'admin request failed',
      );
    trail?.failed(request, response, failure);
  });

  return {
    handle: (request: IncomingMessage, response: ServerResponse) => {
      app(request as Request, response as Response);
    },
    /**
     * For an HTTP upgrade (a WebSocket route, which the server's `upgrade` event handles outside express):
     * authenticates the request and checks the permission row of `GET <its path>`; throws the 401 or 403.
     */
    async authorizeUpgrade(request: IncomingMessage): Promise<Principal> {
      // Every credential: CORS holds back no upgrade, and any page can offer a `gw-bearer.` subprotocol.
      options.origins?.check(request);
      const path = (request.url ?? '/').split('?')[0]!;
      const principal = await authenticate(withProtocolBearer(request.headers), options, { method: 'GET' });
      permitted(principal, 'GET', path, options.routes.match('GET', pathSegments(path))?.route);
      return principal;
    },
    /** Resolves once every audit record under way is stored: call before closing the audit store. */
    drainAudit: async () => trail?.drain(),
  };
}
