import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ClientConfig, Live } from '@gw/shared';
import type { TraceSpan } from '@gw/shared/tracing';
import type { RequestLogDraft } from '../request/request-log.ts';

/** Per-request state shared by the route handler and the ingress's metrics. */
export interface RequestContext {
  requestId: string;
  /** The route's pattern (bounded metric label), never the raw path. */
  route: string;
  /** The path as received, without the query string. */
  path: string;
  /** What the route pattern's `*` matched (a model id, a file id); '' for a pattern without one. */
  wildcard: string;
  startedAt: number;
  /** The provider that served, once known (bounded metric label). */
  provider: string;
  /** The request's server span when tracing is on: every hop after ingress is its descendant. */
  span?: TraceSpan | undefined;
  /** The request's log record in the making, while request logs are on (request-log.ts). */
  log?: RequestLogDraft | undefined;
  /** The error type of a failure answered inside a started stream (the status is then already 200). */
  errorType?: string | undefined;
}

export type RouteHandler = (
  request: IncomingMessage,
  response: ServerResponse,
  context: RequestContext,
) => Promise<void>;

/** The most a request body may hold (`client.max_request_body_bytes`), read at each request. */
export type BodyLimit = Live<Pick<ClientConfig, 'max_request_body_bytes'>>;

export type RouteMethod = 'GET' | 'POST' | 'DELETE';

/**
 * One row of ingress's route table (route-table.ts): methods, path and handler. `path` is a path
 * (`/v1/chat/completions`) or a pattern with one `*` that matches one or more characters, `/` included:
 * `/v1/files/*` is everything below `/v1/files/`, `/genai/v1beta/models/*:generateContent` a model then a
 * method. The handler reads what the `*` matched as `context.wildcard`.
 */
export interface Route {
  method: RouteMethod | readonly RouteMethod[];
  path: string;
  handler: RouteHandler;
}

/** Answers an error in a surface's own shape (SDKs raise their usual exceptions). */
export type SendError = (response: ServerResponse, error: unknown, context: RequestContext) => void;

/**
 * The rows of one surface. With a `prefix` (one segment: `/anthropic`) the surface owns every path below it:
 * one that no row declares is its 404, in its error shape, rather than another service's.
 */
export interface RouteGroup {
  prefix?: string;
  /** gw's error body when absent. */
  sendError?: SendError | undefined;
  routes: readonly Route[];
}
