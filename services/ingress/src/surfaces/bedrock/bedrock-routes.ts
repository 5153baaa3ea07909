import type { IncomingHttpHeaders } from 'node:http';
import { invalidRequest } from '@gw/shared';
import type { RouteGroup, RouteHandler } from '../../http/route.ts';
import { chatToAnthropic } from '../anthropic/chat-to-anthropic.ts';
import {
  answerCompletion,
  loggingErrors,
  readJsonBody,
  type SurfaceDependencies,
} from '../shared/surface-call.ts';
import { surfaceTarget } from '../shared/surface-target.ts';
import { sendBedrockError } from './bedrock-error.ts';
import { chatChunksToConverseEvents, relayingConverseEvents } from './chat-chunks-to-converse-events.ts';
import { chatToConverse } from './chat-to-converse.ts';
import { converseToChat } from './converse-to-chat.ts';
import { chatChunksToInvokeEvents, invokeToChat } from './invoke-anthropic.ts';

const OPERATIONS = ['converse', 'converse-stream', 'invoke', 'invoke-with-response-stream'] as const;
type BedrockOperation = (typeof OPERATIONS)[number];

/** The model id of a path; it arrives percent-encoded (`%3A`, `%2F`) or with a bare `/`. */
function modelIdOf(encoded: string): string {
  try {
    return decodeURIComponent(encoded);
  } catch {
    throw invalidRequest(`model id '${encoded}' is badly encoded`);
  }
}

const SIGV4_CREDENTIAL = /Credential=([^/,\s]+)\//;

/**
 * The virtual key of a Bedrock SDK call. With `AWS_BEARER_TOKEN_BEDROCK` (or `token`) set to it, the SDK
 * sends `Authorization: Bearer`, found like any other. With IAM-style credentials the SDK signs with SigV4:
 * gw does not verify AWS signatures (it holds no AWS secret of its callers) and takes the virtual key from
 * the signature's access key id (`accessKeyId: 'sk-gw-…'`).
 */
function withSigV4Key(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const authorization = headers.authorization;
  if (!authorization?.startsWith('AWS4-HMAC-SHA256') || headers['x-gw-vk']) return headers;
  const accessKeyId = SIGV4_CREDENTIAL.exec(authorization)?.[1];
  return accessKeyId ? { ...headers, 'x-gw-vk': accessKeyId } : headers;
}

/**
 * `/bedrock/model/{modelId}/converse`, `/converse-stream`, `/invoke`, `/invoke-with-response-stream`:
 * Bedrock Runtime for applications written against the AWS SDK (point `endpoint` at `{base}/bedrock`;
 * the SDK's default HTTP/2 handler is served). A Bedrock model id (`anthropic.claude-…`, an ARN) goes to
 * the bedrock provider, `<provider>/<model>` to that provider.
 */
export function bedrockRoutes(dependencies: SurfaceDependencies): RouteGroup {
  const sendError = loggingErrors(sendBedrockError, dependencies.logger);

  const serve =
    (operation: BedrockOperation): RouteHandler =>
    async (request, response, context) => {
      const target = surfaceTarget(modelIdOf(context.wildcard), 'bedrock');
      const headers = withSigV4Key(request.headers);
      const body = await readJsonBody(request, dependencies);
      const common = { dependencies, request, response, context, headers };
      switch (operation) {
        case 'converse':
        case 'converse-stream':
          await answerCompletion({
            ...common,
            parsed: converseToChat({
              body,
              target,
              stream: operation === 'converse-stream',
            }),
            // Bedrock answered the request as it came: its answer goes back as it came.
            render: (result) => ({ json: result.native ?? chatToConverse(result.response) }),
            framing: () => relayingConverseEvents(chatChunksToConverseEvents()),
          });
          return;
        case 'invoke':
        case 'invoke-with-response-stream': {
          const parsed = invokeToChat({
            body,
            target,
            stream: operation === 'invoke-with-response-stream',
          });
          await answerCompletion({
            ...common,
            parsed,
            render: (result) => ({
              json: chatToAnthropic(result.response, context.requestId),
              headers: {
                'x-amzn-bedrock-input-token-count': result.response.usage.prompt_tokens,
                'x-amzn-bedrock-output-token-count': result.response.usage.completion_tokens,
              },
            }),
            framing: () => chatChunksToInvokeEvents({ requestId: context.requestId, prompt: parsed }),
          });
          return;
        }
      }
    };

  return {
    prefix: '/bedrock',
    sendError,
    routes: OPERATIONS.map((operation) => ({
      method: 'POST',
      path: `/bedrock/model/*/${operation}`,
      handler: serve(operation),
    })),
  };
}
