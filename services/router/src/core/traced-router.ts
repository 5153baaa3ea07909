import type { ProviderHealthReport } from '@gw/shared/health';
import {
  ATTRIBUTES,
  genAiOperation,
  providerAttributes,
  responseAttributes,
  type SpanAttributes,
  streamSummary,
  type Tracer,
  type TraceSpan,
  traced,
} from '@gw/shared/tracing';
import type {
  CallOptions,
  CompletionResult,
  CompletionRoute,
  EmbeddingsResult,
  EmbeddingsRoute,
  PassthroughRequest,
  PassthroughResponse,
  ProviderWriteOptions,
  RouteRequest,
  RouterService,
  StreamItem,
} from './router-service.ts';

/** What a route asks, as span attributes (the first target's model is the requested one). */
function routeAttributes(request: RouteRequest): SpanAttributes {
  return {
    [ATTRIBUTES.requestId]: request.requestId,
    [ATTRIBUTES.operation]: genAiOperation(request.operation),
    [ATTRIBUTES.requestModel]: request.targets[0]?.model,
    [ATTRIBUTES.fallbacks]: Math.max(0, request.targets.length - 1),
  };
}

async function* recordedStream(
  span: TraceSpan,
  stream: AsyncIterable<StreamItem>,
): AsyncGenerator<StreamItem> {
  const summary = streamSummary({ includeContent: false });
  try {
    for await (const item of stream) {
      if (item.provider) span.setAttributes(providerAttributes(item.provider));
      summary.chunk(item.chunk);
      yield item;
    }
  } catch (error) {
    span.fail(error);
    throw error;
  } finally {
    span.setAttributes(summary.attributes());
    span.end();
  }
}

/**
 * The router with a span per request (`gw.router.<call>`), child of the caller's context and parent of the
 * upstream attempts' spans (plan-execution.ts): the provider that served, the models, tokens and finish
 * reasons. Content is left to the ingress span (`tracing.include_content`). Wraps the core in both modes.
 */
export class TracedRouter implements RouterService {
  private readonly core: RouterService & { close(): Promise<void> };
  private readonly tracer: Tracer;

  constructor(core: RouterService & { close(): Promise<void> }, tracer: Tracer) {
    this.core = core;
    this.tracer = tracer;
  }

  private start(call: string, options: CallOptions, attributes: () => SpanAttributes): TraceSpan {
    return this.tracer.startSpan(`gw.router.${call}`, { parent: options.trace, attributes });
  }

  complete(request: CompletionRoute, options: CallOptions): Promise<CompletionResult> {
    const span = this.start('complete', options, () => routeAttributes(request));
    return traced(
      span,
      () => this.core.complete(request, { ...options, trace: span.context }),
      (result) => ({
        ...providerAttributes(result.provider),
        ...responseAttributes(result.response, { includeContent: false }),
      }),
    );
  }

  embed(request: EmbeddingsRoute, options: CallOptions): Promise<EmbeddingsResult> {
    const span = this.start('embed', options, () => routeAttributes(request));
    return traced(
      span,
      () => this.core.embed(request, { ...options, trace: span.context }),
      (result) => ({
        ...providerAttributes(result.provider),
        [ATTRIBUTES.responseModel]: result.response.model,
        [ATTRIBUTES.inputTokens]: result.response.usage.prompt_tokens,
      }),
    );
  }

  /** A stream whose span does not record is the core's own, not re-yielded item by item. */
  stream(request: CompletionRoute, options: CallOptions): AsyncIterable<StreamItem> {
    const span = this.start('stream', options, () => routeAttributes(request));
    const stream = this.core.stream(request, { ...options, trace: span.context });
    return span.recording ? recordedStream(span, stream) : stream;
  }

  passthrough(
    request: PassthroughRequest,
    body: AsyncIterable<Uint8Array> | undefined,
    options: CallOptions,
  ): Promise<PassthroughResponse> {
    const span = this.start('passthrough', options, () => ({
      [ATTRIBUTES.requestId]: request.requestId,
      [ATTRIBUTES.requestModel]: request.target.model,
      ...providerAttributes(request.target.provider),
    }));
    // The span covers the call up to the answer's head; its body streams on untraced.
    return traced(
      span,
      () => this.core.passthrough(request, body, { ...options, trace: span.context }),
      (answer) => ({ [ATTRIBUTES.httpStatus]: answer.status }),
    );
  }

  listProviders(): Promise<Array<Record<string, unknown>>> {
    return this.core.listProviders();
  }

  getProvider(name: string): Promise<Record<string, unknown>> {
    return this.core.getProvider(name);
  }

  putProvider(
    name: string,
    config: unknown,
    options: ProviderWriteOptions & { create: boolean },
  ): Promise<Record<string, unknown>> {
    return this.core.putProvider(name, config, options);
  }

  patchProvider(
    name: string,
    patch: Record<string, unknown>,
    options?: ProviderWriteOptions,
  ): Promise<Record<string, unknown>> {
    return this.core.patchProvider(name, patch, options);
  }

  deleteProvider(name: string): Promise<void> {
    return this.core.deleteProvider(name);
  }

  health(): Promise<ProviderHealthReport[]> {
    return this.core.health();
  }

  close(): Promise<void> {
    return this.core.close();
  }
}
