import type { IncomingMessage, ServerResponse } from 'node:http';
import { ATTRIBUTES, type Tracer, type TraceSpan, traceContextOfHeaders } from '@gw/shared/tracing';
import type { RequestContext } from './route.ts';

/**
 * The server span of one request (`{method} {route}`), child of the caller's `traceparent`/`tracestate`
 * when it sent them (a malformed one starts a new trace). Its name and attributes carry the route template,
 * never the raw path.
 */
export function startRequestSpan(
  tracer: Tracer,
  request: IncomingMessage,
  context: RequestContext,
): TraceSpan {
  return tracer.startSpan(`${request.method} ${context.route}`, {
    kind: 'server',
    parent: traceContextOfHeaders(request.headers),
    attributes: () => ({
      [ATTRIBUTES.httpMethod]: request.method,
      [ATTRIBUTES.httpRoute]: context.route,
      [ATTRIBUTES.requestId]: context.requestId,
    }),
  });
}

/** Ends a request's span with the status the caller got. */
export function endRequestSpan(span: TraceSpan, response: ServerResponse): void {
  if (span.recording) span.setAttributes({ [ATTRIBUTES.httpStatus]: response.statusCode });
  span.end();
}
