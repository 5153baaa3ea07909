import { GatewayError } from '@gw/shared';
import { z } from 'zod';
import { errorMessageReader } from '../upstream-call.ts';

/** Cohere answers errors as `{ "message": … }`, sometimes with an `id`. */
export const readCohereErrorMessage = errorMessageReader(
  z.object({ message: z.string().min(1) }).transform((body) => body.message),
);

/**
 * A generation Cohere itself reports as failed after answering 200: a stream's error event, or a
 * `finish_reason` of ERROR or TIMEOUT. It is an upstream failure (502) so the router can retry or fall back.
 */
export function cohereGenerationError(options: {
  provider: string;
  message: string | undefined;
  body: unknown;
}): GatewayError {
  return new GatewayError({
    type: 'upstream_error',
    status: 502,
    message: options.message ?? `${options.provider} failed while generating`,
    upstream: true,
    upstreamBody: options.body,
    provider: options.provider,
  });
}
