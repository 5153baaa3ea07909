import type { ServerResponse } from 'node:http';
import { toGatewayError } from '@gw/shared';
import type { RequestContext } from '../../http/route.ts';

/** Bedrock Runtime's modelled exceptions by HTTP status: the name the SDK turns into its exception class. */
function bedrockErrorType(status: number): string {
  switch (status) {
    case 400:
    case 405:
    case 413:
      return 'ValidationException';
    case 401:
    case 403:
      return 'AccessDeniedException';
    case 402:
      return 'ServiceQuotaExceededException';
    case 404:
      return 'ResourceNotFoundException';
    case 408:
    case 504:
      return 'ModelTimeoutException';
    case 424:
      return 'ModelErrorException';
    case 429:
      return 'ThrottlingException';
    case 503:
      return 'ServiceUnavailableException';
    default:
      return status >= 500 ? 'InternalServerException' : 'ValidationException';
  }
}

/** The member name of an exception inside an event stream (`throttlingException`). */
export function bedrockStreamExceptionType(status: number): string {
  const type = bedrockErrorType(status);
  const streamed = [
    'ValidationException',
    'ThrottlingException',
    'ServiceUnavailableException',
    'ModelTimeoutException',
  ];
  const name = streamed.includes(type) ? type : 'InternalServerException';
  return name[0]!.toLowerCase() + name.slice(1);
}

/**
 * The Bedrock surface's error mapper: `x-amzn-errortype` names the exception and the body is `{message}`,
 * as Bedrock answers, so the AWS SDK raises ValidationException, ThrottlingException… with gw's status.
 */
export function sendBedrockError(response: ServerResponse, thrown: unknown, context: RequestContext): void {
  const error = toGatewayError(thrown);
  const type = bedrockErrorType(error.status);
  const payload = JSON.stringify({ message: error.message });
  const headers: Record<string, string | number> = {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
    'x-amzn-requestid': context.requestId,
    'x-request-id': context.requestId,
  };
  if (error.retryAfter !== undefined) headers['retry-after'] = Math.max(0, Math.ceil(error.retryAfter));
  response.writeHead(error.status, headers);
  response.end(payload);
}
