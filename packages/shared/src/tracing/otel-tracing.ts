// The OpenTelemetry side of gw's tracing. Loaded by `startTracing` only when `tracing.enabled` is true: a
// gateway that does not trace never imports this file, nor any @opentelemetry module.
import { hostname } from 'node:os';
import {
  type Context,
  createNoopMeter,
  DiagLogLevel,
  defaultTextMapGetter,
  diag,
  type Meter,
  type MeterProvider,
  ROOT_CONTEXT,
  type Span,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  type IdGenerator,
  ParentBasedSampler,
  RandomIdGenerator,
  SamplingDecision,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { TracingConfig } from '../config/tracing-config.ts';
import { toGatewayError } from '../errors/gateway-error.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import { ATTRIBUTES } from './gen-ai-attributes.ts';
import { otlpSpanExporter } from './otlp-exporter.ts';
import type {
  SpanKind as GwSpanKind,
  SpanAttributes,
  SpanOptions,
  TraceContext,
  Tracer,
  TraceSpan,
  Tracing,
} from './tracer.ts';

const KINDS: Record<GwSpanKind, SpanKind> = {
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  internal: SpanKind.INTERNAL,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
};

/** Longest attribute value kept (content attributes are cut there): a span stays a few KiB at most. */
const ATTRIBUTE_VALUE_LIMIT = 16 * 1024;

const propagator = new W3CTraceContextPropagator();

function definedOnly(attributes: SpanAttributes): Record<string, string | number | boolean | string[]> {
  const kept: Record<string, string | number | boolean | string[]> = {};
  for (const name in attributes) {
    const value = attributes[name];
    if (value !== undefined) kept[name] = value;
  }
  return kept;
}

/**
 * The OpenTelemetry context a TraceContext made in this process stands for: a hop inside the process (embedded
 * mode, or a span and its children in one service) uses it as it is instead of parsing the `traceparent` text
 * again. A symbol key, so nothing that serializes the context (gRPC metadata, job data) carries it.
 */
const IN_PROCESS = Symbol('gw.otel-context');

/** Marks the context of a root span that was not sampled: every span under it is an UnsampledSpan at once. */
const UNSAMPLED_ROOT = Symbol('gw.unsampled-root');

type CarriedContext = TraceContext & { [IN_PROCESS]?: Context; [UNSAMPLED_ROOT]?: true };

/** A span context as W3C trace context (version 00), remembering its OpenTelemetry context. */
function carried(spanContext: SpanContext, otelContext: Context): TraceContext {
  const flags = spanContext.traceFlags.toString(16).padStart(2, '0');
  const context: CarriedContext = { traceparent: `00-${spanContext.traceId}-${spanContext.spanId}-${flags}` };
  const state = spanContext.traceState?.serialize();
  if (state) context.tracestate = state;
  context[IN_PROCESS] = otelContext;
  return context;
}

class OtelSpan implements TraceSpan {
  readonly recording: boolean;
  private readonly span: Span;
  private propagated: TraceContext | undefined;

  constructor(span: Span) {
    this.span = span;
    this.recording = span.isRecording();
  }

  get context(): TraceContext {
    this.propagated ??= carried(this.span.spanContext(), trace.setSpan(ROOT_CONTEXT, this.span));
    return this.propagated;
  }

  setAttributes(attributes: SpanAttributes): void {
    if (this.recording) this.span.setAttributes(definedOnly(attributes));
  }

  fail(error: unknown): void {
    if (!this.recording) return;
    const failure = toGatewayError(error);
    this.span.setAttributes({ [ATTRIBUTES.errorType]: failure.type });
    this.span.setStatus({ code: SpanStatusCode.ERROR, message: failure.type });
  }

  end(): void {
    this.span.end();
  }
}

/**
 * A span under a parent that is not sampled: nothing would record it (the sampler is parent-based), so it is
 * not made at all, and the next hop gets the parent's context. Every hop of an unsampled request then costs
 * next to nothing; only its first span (a root, or the caller's context parsed) is the SDK's.
 */
class UnsampledSpan implements TraceSpan {
  readonly recording = false;
  readonly context: TraceContext;

  constructor(context: TraceContext) {
    this.context = context;
  }

  setAttributes(): void {}
  fail(): void {}
  end(): void {}
}

/**
 * The ids of the SDK's spans, with one exception: a root span takes the trace id its sampling was decided on
 * (`startSpan` decides a root's sampling before the SDK makes it, and makes an unsampled root itself).
 */
class RootTraceIds implements IdGenerator {
  readonly #random = new RandomIdGenerator();
  /** The trace id of the next span the SDK makes, when it is a sampled root (set right before it is made). */
  next: string | undefined;

  generateTraceId(): string {
    const id = this.next ?? this.#random.generateTraceId();
    this.next = undefined;
    return id;
  }

  generateSpanId(): string {
    return this.#random.generateSpanId();
  }
}

/** The parent a caller's context names; a malformed one is ignored (the span starts a new trace). */
function parentOf(parent: TraceContext | undefined): Context {
  if (!parent) return ROOT_CONTEXT;
  return (
    (parent as CarriedContext)[IN_PROCESS] ?? propagator.extract(ROOT_CONTEXT, parent, defaultTextMapGetter)
  );
}

/**
 * The batch processor's own counts (OpenTelemetry's `otel.sdk.processor.span.processed`: finished exports,
 * and drops with `error.type` queue_full) as gw_tracing_spans_total, through the meter hook the SDK offers.
 */
function spanCountingMeterProvider(
  metrics: Metrics,
  onDropped: ((count: number) => void) | undefined,
): MeterProvider {
  const noop = createNoopMeter();
  const meter: Meter = Object.create(noop);
  meter.createCounter = (name, options) => {
    if (name !== 'otel.sdk.processor.span.processed') return noop.createCounter(name, options);
    return {
      add(count, attributes) {
        const errorType = attributes?.['error.type'];
        const outcome =
          errorType === undefined ? 'exported' : errorType === 'queue_full' ? 'dropped' : 'failed';
        metrics.tracingSpans.inc({ outcome }, count);
        if (outcome === 'dropped') onDropped?.(count);
      },
    };
  };
  return { getMeter: () => meter };
}

export interface OtelTracingOptions {
  config: TracingConfig;
  /** Where spans go (the config's endpoint, else the environment's, else the OTLP default). */
  endpoint: string;
  metrics: Metrics;
  logger: Logger;
  onDropped?: ((count: number) => void) | undefined;
}

/**
 * Tracing of one process over the official SDK: a tracer provider per service this process runs (each its
 * own `service.name`), all feeding one bounded BatchSpanProcessor and one OTLP/HTTP (JSON) exporter. No global
 * provider, context manager or propagator is registered: context is passed explicitly.
 */
export function startOtelTracing(options: OtelTracingOptions): Tracing {
  const { config, logger } = options;
  // The SDK reports export failures and drops through its diagnostics channel: into the process's log.
  diag.setLogger(
    {
      error: (message) => logger.warn({ otel: message }, 'tracing: export problem'),
      warn: (message) => logger.warn({ otel: message }, 'tracing: export problem'),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
  const exporter = otlpSpanExporter({
    url: options.endpoint,
    headers: config.headers,
    timeoutMillis: config.export_timeout_ms,
  });
  const processor = new BatchSpanProcessor({
    exporter,
    maxQueueSize: config.max_queue_size,
    maxExportBatchSize: config.max_export_batch_size,
    scheduledDelayMillis: config.scheduled_delay_ms,
    exportTimeoutMillis: config.export_timeout_ms,
    selfObsMeterProvider: spanCountingMeterProvider(options.metrics, options.onDropped),
  });
  const rootSampler = new TraceIdRatioBasedSampler(config.sampling_ratio);
  const sampler = new ParentBasedSampler({ root: rootSampler });
  const ids = new RootTraceIds();
  const instance = `${hostname()}-${process.pid}`;
  const tracers = new Map<string, Tracer>();

  return {
    tracer(service: string): Tracer {
      let tracer = tracers.get(service);
      if (tracer) return tracer;
      const provider = new TracerProvider({
        resource: resourceFromAttributes({
          'service.name': `${config.service_name_prefix}${service}`,
          'service.instance.id': instance,
        }),
        sampler,
        idGenerator: ids,
        spanProcessors: [processor],
        spanLimits: { attributeValueLengthLimit: ATTRIBUTE_VALUE_LIMIT },
      });
      const otel = provider.getTracer('gw');
      tracer = {
        includeContent: config.include_content,
        startSpan(name: string, spanOptions: SpanOptions = {}): TraceSpan {
          const given = spanOptions.parent as CarriedContext | undefined;
          if (given?.[UNSAMPLED_ROOT]) return new UnsampledSpan(given);
          const parent = parentOf(given);
          const parentSpan = trace.getSpanContext(parent);
          if (parentSpan) {
            if ((parentSpan.traceFlags & TraceFlags.SAMPLED) === 0)
              return new UnsampledSpan(given?.[IN_PROCESS] ? given : carried(parentSpan, parent));
          } else {
            // A root: sampled by its trace id as the SDK's sampler would, and when it is not, made here with
            // the W3C context alone (the SDK's non-recording span and its context cost a request more than the
            // rest of its unsampled spans together).
            const traceId = ids.generateTraceId();
            const sampling = rootSampler.shouldSample(ROOT_CONTEXT, traceId);
            if (sampling.decision === SamplingDecision.NOT_RECORD) {
              const context: CarriedContext = { traceparent: `00-${traceId}-${ids.generateSpanId()}-00` };
              context[UNSAMPLED_ROOT] = true;
              return new UnsampledSpan(context);
            }
            ids.next = traceId;
          }
          const span = otel.startSpan(name, { kind: KINDS[spanOptions.kind ?? 'internal'] }, parent);
          ids.next = undefined;
          // Attributes only on a span that records them (the samplers here do not read them).
          if (spanOptions.attributes && span.isRecording())
            span.setAttributes(definedOnly(spanOptions.attributes()));
          return new OtelSpan(span);
        },
      };
      tracers.set(service, tracer);
      return tracer;
    },
    async [Symbol.asyncDispose](): Promise<void> {
      await this.shutdown();
    },
    async shutdown(): Promise<void> {
      // The providers share the processor: shutting it down once flushes every service's spans.
      await processor.shutdown().catch((error: unknown) => {
        logger.warn({ err: error }, 'tracing: the last spans could not be exported');
      });
    },
  };
}
