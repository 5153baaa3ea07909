import type { IncomingMessage, ServerResponse } from 'node:http';
import { CACHE_RESPONSE_HEADERS } from '@gw/cache';
import type { RouteMatch } from './route-table.ts';

/**
 * The answer headers a page may read (the console shows them): the request id, the cache's, an MCP tool's error
 * flag and when to retry. The CORS-safelisted ones (`content-type`…) need no listing.
 */
const EXPOSED = [
  'x-request-id',
  ...Object.values(CACHE_RESPONSE_HEADERS),
  'x-gw-mcp-tool-error',
  'x-gw-routing-rule',
  'retry-after',
].join(', ');

/**
 * How long a browser keeps a preflight's answer: short enough that a removed origin stops working within
 * minutes (`client.cors_allowed_origins` changes without a restart).
 */
const MAX_AGE_SECONDS = '600';

/** `Access-Control-Request-Headers` as browsers send it: header names separated by commas, bounded. */
const REQUESTED_HEADERS = /^[\w-]+(?:\s*,\s*[\w-]+){0,49}$/;
const REQUESTED_HEADERS_LIMIT = 2048;

/**
 * CORS for browser pages that call the inference API with a virtual key (docs/ui.md), from the origins of
 * `client.cors_allowed_origins`. No credentials mode: gw's keys travel in headers, never in cookies. `origins`
 * is read per request (a system setting changes it live); the set is rebuilt only when the list changes, so with
 * none configured a request pays one comparison and one size check.
 */
export function createCors(origins: () => readonly string[]) {
  let list: readonly string[] | undefined;
  let allowed = new Set<string>();

  /** The request's origin when it may read the answer; undefined otherwise (no origin, or not allowed). */
  function allowedOrigin(request: IncomingMessage, response: ServerResponse): string | undefined {
    const current = origins();
    if (current !== list) {
      list = current;
      allowed = new Set(current);
    }
    if (allowed.size === 0) return undefined;
    const origin = request.headers.origin;
    if (origin === undefined) return undefined;
    // The answer differs by origin whether or not this one is allowed: a cache must not serve one to another.
    response.setHeader('vary', 'Origin');
    return allowed.has(origin) || allowed.has('*') ? origin : undefined;
  }

  /**
   * Before a route's answer: a request from an allowed origin may read it and gw's headers on it; its preflight
   * (`OPTIONS` with `Access-Control-Request-Method`) to a route is answered 204 with the route's methods, and true
   * returned. Any other request gets no CORS header, so a refused origin's preflight meets the usual 405 or 404,
   * which the browser takes as a refusal.
   */
  return function cors(request: IncomingMessage, response: ServerResponse, match: RouteMatch): boolean {
    const origin = allowedOrigin(request, response);
    if (origin === undefined) return false;
    response.setHeader('access-control-allow-origin', origin);
    const preflight =
      request.method === 'OPTIONS' &&
      request.headers['access-control-request-method'] !== undefined &&
      match.allowed.length > 0;
    if (!preflight) {
      response.setHeader('access-control-expose-headers', EXPOSED);
      return false;
    }
    response.setHeader('access-control-allow-methods', match.allow);
    const requested = request.headers['access-control-request-headers'];
    if (
      requested !== undefined &&
      requested.length <= REQUESTED_HEADERS_LIMIT &&
      REQUESTED_HEADERS.test(requested)
    )
      response.setHeader('access-control-allow-headers', requested);
    response.setHeader('access-control-max-age', MAX_AGE_SECONDS);
    response.writeHead(204).end();
    return true;
  };
}

/**
 * A relayed provider answer's headers, for `writeHead`: without the provider's own `access-control-*` (who may
 * read gw's answers is gw's setting, not the provider's), and its `vary` joined to the one CORS set.
 */
export function relayedHeaders(
  headers: Readonly<Record<string, string | string[]>>,
  response: ServerResponse,
): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith('access-control-')) kept[name] = value;
  }
  const vary = response.getHeader('vary');
  if (vary !== undefined && kept['vary'] !== undefined)
    kept['vary'] = `${String(kept['vary'])}, ${String(vary)}`;
  return kept;
}
