import { Metadata } from '@grpc/grpc-js';
import { type TraceContext, traceContextSchema } from '../tracing/tracer.ts';

/**
 * The W3C trace context of a call as gRPC metadata (`traceparent`, `tracestate`), the way OpenTelemetry's
 * gRPC instrumentation carries it. A call without a trace gets empty metadata.
 */
export function traceMetadata(trace: TraceContext | undefined): Metadata {
  const metadata = new Metadata();
  if (trace) {
    metadata.set('traceparent', trace.traceparent);
    if (trace.tracestate) metadata.set('tracestate', trace.tracestate);
  }
  return metadata;
}

/** The caller's trace context from a call's metadata; malformed or absent is none (a new trace). */
export function traceOfMetadata(metadata: Metadata): TraceContext | undefined {
  const [traceparent] = metadata.get('traceparent');
  const [tracestate] = metadata.get('tracestate');
  return traceOfFields(traceparent, tracestate);
}

/** The caller's trace context from the fields a message carries it in (a lane's); '' or malformed is none. */
export function traceOfFields(traceparent: unknown, tracestate: unknown): TraceContext | undefined {
  if (typeof traceparent !== 'string' || traceparent === '') return undefined;
  const parsed = traceContextSchema.safeParse({
    traceparent,
    tracestate: typeof tracestate === 'string' && tracestate !== '' ? tracestate : undefined,
  });
  return parsed.success ? parsed.data : undefined;
}
