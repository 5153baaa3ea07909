import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TraceSpan } from '@gw/shared/tracing';
import type { RequestLogDraft } from './request-log.ts';

/** Per-request state shared by the route handler and the ingress's metrics. */
export interface RequestContext {
  requestId: string;
  /** The route's template (bounded metric label), never the raw path. */
  route: string;
  /** The path as received, without the query string. */
  path: string;
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

/**
 * One HTTP route of ingress. `path` matches exactly; `prefix` matches the path and everything under it
 * (surfaces whose paths carry a model or an id).
 */
export interface Route {
  method: string | readonly string[];
  path?: string;
  prefix?: string;
  handler: RouteHandler;
  /** Answers errors in the surface's own shape (SDKs raise their usual exceptions); gw's error body by default. */
  sendError?: (response: ServerResponse, error: unknown, context: RequestContext) => void;
}
