import { GatewayError } from '@gw/shared';
import { z } from 'zod';
import { errorMessageReader } from '../upstream-call.ts';

/** Bedrock answers `{ "message": … }`; some AWS front ends (auth failures) spell it `Message`. */
export const readBedrockErrorMessage = errorMessageReader(
  z.object({ message: z.string() }).transform((body) => body.message),
  z.object({ message: z.null().optional(), Message: z.string() }).transform((body) => body.Message),
);

/** HTTP statuses Bedrock gives these exceptions when they are not inside a stream. */
const EXCEPTION_STATUS: Record<string, number> = {
  throttlingException: 429,
  validationException: 400,
  serviceUnavailableException: 503,
  internalServerException: 500,
  modelTimeoutException: 408,
};

/**
 * An exception frame of a ConverseStream answer (`:message-type: exception`, its name in
 * `:exception-type`) as a GatewayError. Throttling keeps 429 so the router retries it; failures of the
 * model itself (modelStreamErrorException) and unknown ones are 502s.
 */
export function bedrockStreamException(options: {
  provider: string;
  exceptionType: string;
  body: unknown;
}): GatewayError {
  const { provider, exceptionType, body } = options;
  const name = exceptionType.charAt(0).toLowerCase() + exceptionType.slice(1);
  const message = readBedrockErrorMessage(body) ?? (typeof body === 'string' && body ? body : undefined);
  return new GatewayError({
    type: 'upstream_error',
    status: EXCEPTION_STATUS[name] ?? 502,
    message: `${provider} stream failed: ${exceptionType}${message ? `: ${message}` : ''}`,
    code: exceptionType,
    upstream: true,
    upstreamBody: body,
    provider,
  });
}
