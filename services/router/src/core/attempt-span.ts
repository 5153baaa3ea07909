import type { GatewayError, Operation } from '@gw/shared';
import {
  ATTRIBUTES,
  genAiOperation,
  providerAttributes,
  type TraceContext,
  type Tracer,
  type TraceSpan,
} from '@gw/shared/tracing';

/**
 * The client span of one upstream attempt (GenAI conventions: `{operation} {model}`): the provider, the model,
 * the key's id (never its value) and the attempt's number within the request. Its context is what the upstream
 * receives as `traceparent`. A stream's attempt ends with its first chunk (the stream goes on under the
 * router's request span).
 */
export function startAttemptSpan(
  tracer: Tracer,
  attempt: {
    operation: Operation;
    provider: string;
    model: string;
    keyId: string | undefined;
    number: number;
    parent: TraceContext | undefined;
  },
): TraceSpan {
  const operation = genAiOperation(attempt.operation);
  return tracer.startSpan(`${operation} ${attempt.model}`, {
    kind: 'client',
    parent: attempt.parent,
    attributes: () => ({
      [ATTRIBUTES.operation]: operation,
      [ATTRIBUTES.requestModel]: attempt.model,
      [ATTRIBUTES.keyId]: attempt.keyId,
      [ATTRIBUTES.attempt]: attempt.number,
      ...providerAttributes(attempt.provider),
    }),
  });
}

/** Ends a failed attempt's span with its error type and, when the upstream answered, the upstream's status. */
export function endFailedAttempt(span: TraceSpan, failure: GatewayError): void {
  if (failure.upstream && span.recording) span.setAttributes({ [ATTRIBUTES.httpStatus]: failure.status });
  span.fail(failure);
  span.end();
}
