import type { Route, RouteHandler } from '../http/route.ts';
import { OPENAI_SSE } from '../http/sse-writer.ts';
import { type ParsedCompletion, parseChatRequest, parseTextRequest } from '../request/parse-request.ts';
import {
  answerCompletion,
  readJsonBody,
  type SurfaceDependencies,
  servedJson,
} from '../surfaces/shared/surface-call.ts';

/**
 * gw's native completion paths: `/v1/chat/completions`, `/chat/completions`, `/v1/text/completions`. They
 * answer as the surfaces do (surface-call.ts), in the router's own format: its JSON as the transport held it,
 * streams as OpenAI's SSE.
 */
export function completionRoutes(dependencies: SurfaceDependencies): Route[] {
  const completion =
    (parse: (body: unknown) => ParsedCompletion): RouteHandler =>
    async (request, response, context) => {
      await answerCompletion({
        dependencies,
        request,
        response,
        context,
        parsed: parse(await readJsonBody(request, dependencies)),
        render: servedJson,
        framing: () => OPENAI_SSE,
      });
    };

  return [
    { method: 'POST', path: '/v1/chat/completions', handler: completion(parseChatRequest) },
    { method: 'POST', path: '/chat/completions', handler: completion(parseChatRequest) },
    { method: 'POST', path: '/v1/text/completions', handler: completion(parseTextRequest) },
  ];
}
