import { z } from 'zod';

/**
 * gw's own tracing interface: what the services see of OpenTelemetry. Cores and transports take a `Tracer`
 * (or none: tracing off, then every use is one `if`), and context crosses every seam explicitly as a
 * `TraceContext`, never through async hooks. Only `otel-tracing.ts` knows OpenTelemetry, and it is loaded
 * only when tracing is enabled.
 */

/**
 * A span's W3C trace context as it crosses a seam: the `traceparent` and `tracestate` values of HTTP headers,
 * gRPC metadata and MCP job data.
 */
export const traceContextSchema = z.object({
  // `00-<32 hex>-<16 hex>-<2 hex>` today; later versions may append fields, hence a bound and not a length.
  traceparent: z.string().min(55).max(256),
  tracestate: z.string().max(512).optional(),
});

export type TraceContext = z.infer<typeof traceContextSchema>;

export type SpanKind = 'server' | 'client' | 'internal' | 'producer' | 'consumer';

export type AttributeValue = string | number | boolean | string[];

/** Span attributes; an undefined value is left out. */
export type SpanAttributes = Record<string, AttributeValue | undefined>;

/** A started span. Every method is synchronous: nothing on a request's path waits for tracing. */
export interface TraceSpan {
  /** This span as the parent of the next hop. */
  readonly context: TraceContext;
  /** False when the span is not sampled: attributes would be dropped, so a caller may skip computing them. */
  readonly recording: boolean;
  setAttributes(attributes: SpanAttributes): void;
  /**
   * Marks the span failed with the error's gateway type (`error.type`) and status. Never its message: an
   * upstream's message may echo what it was sent.
   */
  fail(error: unknown): void;
  /** Ends a recording span; for one that does not record it does nothing, and a caller may leave it out. */
  end(): void;
}

export interface SpanOptions {
  kind?: SpanKind;
  /** The caller's context (none: a new trace, sampled at the configured ratio). */
  parent?: TraceContext | undefined;
  /**
   * The span's first attributes, computed only when the span records (most spans do not, at a low sampling
   * ratio): an object literal of computed attribute names costs a runtime call per name in V8, about as much as
   * the rest of an unsampled span.
   */
  attributes?: () => SpanAttributes;
}

/** Makes the spans of one service (its `service.name`). */
export interface Tracer {
  /** `tracing.include_content`: prompts, answers and tool arguments may be recorded. */
  readonly includeContent: boolean;
  startSpan(name: string, options?: SpanOptions): TraceSpan;
}

/** The tracing of one process: a tracer per service it runs, one export queue. */
export interface Tracing extends AsyncDisposable {
  tracer(service: string): Tracer;
  /** Exports what is queued (bounded by the export timeout), then stops exporting; disposing does the same. */
  shutdown(): Promise<void>;
}

/**
 * Runs a call under its span: the answer's attributes (`attributesOf`), or the failure's type; then the span's
 * end. A span that does not record (nearly every one at a low sampling ratio) has nothing to add or end: the
 * call is returned as it is, without an async frame around it.
 */
export function traced<Result>(
  span: TraceSpan,
  call: () => Promise<Result>,
  attributesOf?: (result: Result) => SpanAttributes,
): Promise<Result> {
  return span.recording ? recorded(span, call, attributesOf) : call();
}

async function recorded<Result>(
  span: TraceSpan,
  call: () => Promise<Result>,
  attributesOf: ((result: Result) => SpanAttributes) | undefined,
): Promise<Result> {
  try {
    const result = await call();
    if (attributesOf) span.setAttributes(attributesOf(result));
    return result;
  } catch (error) {
    span.fail(error);
    throw error;
  } finally {
    span.end();
  }
}

/** The W3C trace context headers of an incoming HTTP request, when it has them. */
export function traceContextOfHeaders(
  headers: Record<string, string | string[] | undefined>,
): TraceContext | undefined {
  const { traceparent, tracestate } = headers;
  if (typeof traceparent !== 'string') return undefined;
  return { traceparent, tracestate: Array.isArray(tracestate) ? tracestate.join(',') : tracestate };
}

/** A trace context as the headers of an outgoing HTTP request. */
export function traceHeaders(trace: TraceContext): Record<string, string> {
  return trace.tracestate
    ? { traceparent: trace.traceparent, tracestate: trace.tracestate }
    : { traceparent: trace.traceparent };
}
