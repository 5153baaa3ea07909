import type { RouteGroup, RouteHandler } from '../../http/route.ts';
import { relayingNative } from '../../http/sse-writer.ts';
import { estimateOf } from '../../request/estimate-tokens.ts';
import { handlePassthrough } from '../passthrough/passthrough-routes.ts';
import {
  answerCompletion,
  loggingErrors,
  readJsonBody,
  type SurfaceDependencies,
  writeJson,
} from '../shared/surface-call.ts';
import { surfaceTarget } from '../shared/surface-target.ts';
import { sendAnthropicError } from './anthropic-error.ts';
import { anthropicToChat } from './anthropic-to-chat.ts';
import { chatChunksToAnthropicEvents } from './chat-chunks-to-anthropic-events.ts';
import { chatToAnthropic } from './chat-to-anthropic.ts';

const target = (model: string) => surfaceTarget(model, 'anthropic');

/**
 * `/anthropic/v1/messages` (+ `count_tokens`, `models`): Anthropic's Messages API for applications written
 * against the Anthropic SDK. `claude-…` goes to Anthropic, `<provider>/<model>` to that provider (an
 * Anthropic-shaped request answered by OpenAI). The virtual key may come as `x-api-key` (SDK 0.x) or
 * `Authorization: Bearer` (SDK 1.x); any `anthropic-version` is accepted.
 */
export function anthropicRoutes(dependencies: SurfaceDependencies): RouteGroup {
  const sendError = loggingErrors(sendAnthropicError, dependencies.logger);

  const messages: RouteHandler = async (request, response, context) => {
    const body = await readJsonBody(request, dependencies);
    const parsed = anthropicToChat(body, target);
    const beta = request.headers['anthropic-beta'];
    if (parsed.native && beta !== undefined) {
      parsed.native.headers['anthropic-beta'] = Array.isArray(beta) ? beta.join(',') : beta;
    }
    await answerCompletion({
      dependencies,
      request,
      response,
      context,
      parsed,
      // A provider of Anthropic's format answered the request as it came: its answer goes back as it came.
      render: (result) => ({
        json: result.native ?? chatToAnthropic(result.response, context.requestId),
      }),
      framing: () =>
        relayingNative(chatChunksToAnthropicEvents({ requestId: context.requestId, prompt: parsed })),
    });
  };

  /**
   * Anthropic counts its own tokens (forwarded, governed like any pass-through); for other providers the
   * count is gw's estimate of the translated request (request/estimate-tokens.ts `estimateOf`).
   */
  const countTokens: RouteHandler = async (request, response, context) => {
    const body = await readJsonBody(request, dependencies);
    const counted = anthropicToChat(body, target, { counting: true });
    if (counted.target.provider === 'anthropic') {
      await handlePassthrough({
        dependencies,
        request,
        response,
        context,
        operation: 'count_tokens',
        path: '/count-tokens',
        defaultProvider: 'anthropic',
        json: { ...(body as Record<string, unknown>), model: counted.target.model },
      });
      return;
    }
    await dependencies.pipeline.checkCaller({
      requestId: context.requestId,
      headers: request.headers,
      span: context.span,
    });
    writeJson(response, context, { input_tokens: estimateOf(counted).promptTokens });
  };

  const models: RouteHandler = (request, response, context) =>
    handlePassthrough({
      dependencies,
      request,
      response,
      context,
      operation: 'models',
      path: (request.url ?? '').slice('/anthropic/v1'.length),
      defaultProvider: 'anthropic',
    });

  return {
    prefix: '/anthropic',
    sendError,
    routes: [
      { method: 'POST', path: '/anthropic/v1/messages', handler: messages },
      { method: 'POST', path: '/anthropic/v1/messages/count_tokens', handler: countTokens },
      { method: 'GET', path: '/anthropic/v1/models', handler: models },
      { method: 'GET', path: '/anthropic/v1/models/*', handler: models },
    ],
  };
}
