import type { RouteRequest } from '@gw/router';
import { observeStream } from '@gw/shared';
import {
  ATTRIBUTES,
  genAiOperation,
  providerAttributes,
  responseAttributes,
  type SpanAttributes,
  streamSummary,
  type Tracer,
} from '@gw/shared/tracing';
import type { Exchange, Stage } from './stage.ts';

/** What the request asks, on its span: the operation and model, and the prompt only with `include_content`. */
function requestAttributes(route: RouteRequest, includeContent: boolean): SpanAttributes {
  const attributes: SpanAttributes = {
    [ATTRIBUTES.operation]: genAiOperation(route.operation),
    [ATTRIBUTES.requestModel]: route.targets[0]?.model,
  };
  if (includeContent) {
    const input =
      route.operation === 'chat' ? route.messages : route.operation === 'text' ? route.prompt : route.input;
    attributes[ATTRIBUTES.inputMessages] = JSON.stringify(input);
  }
  return attributes;
}

/** The exchange's span when it records, else undefined (an unsampled request costs nothing more here). */
function recording(exchange: Exchange) {
  return exchange.span?.recording ? exchange.span : undefined;
}

/**
 * Trace: the GenAI attributes of a request on its ingress span (docs/tracing.md): operation, requested and
 * answering model, provider, tokens, finish reasons, and with `tracing.include_content` the prompt and the
 * answer. In the list only when tracing is on; next to `record`, so it sees what the caller gets (the usage of
 * every round of an agent loop).
 */
export function traceStage(tracer: Tracer): Stage {
  const { includeContent } = tracer;
  return {
    name: 'trace',
    async complete(exchange, next) {
      const span = recording(exchange);
      if (!span) return next();
      span.setAttributes(requestAttributes(exchange.route, includeContent));
      const result = await next();
      span.setAttributes({
        ...providerAttributes(result.provider),
        ...responseAttributes(result.response, { includeContent }),
      });
      return result;
    },
    async embed(exchange, next) {
      const span = recording(exchange);
      if (!span) return next();
      span.setAttributes(requestAttributes(exchange.route, includeContent));
      const result = await next();
      span.setAttributes({
        ...providerAttributes(result.provider),
        [ATTRIBUTES.responseModel]: result.response.model,
        [ATTRIBUTES.inputTokens]: result.response.usage.prompt_tokens,
      });
      return result;
    },
    async stream(exchange, next) {
      const span = recording(exchange);
      if (!span) return next();
      span.setAttributes(requestAttributes(exchange.route, includeContent));
      const summary = streamSummary({ includeContent });
      return observeStream(await next(), {
        item(item) {
          if (item.provider) span.setAttributes(providerAttributes(item.provider));
          summary.chunk(item.chunk);
        },
        end: () => span.setAttributes(summary.attributes()),
      });
    },
  };
}
