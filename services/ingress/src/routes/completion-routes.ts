import type { Logger, Metrics } from '@gw/shared';
import { parseJson, readBody } from '@gw/shared';
import { abortOnClose } from '../http/abort-on-close.ts';
import { answerStatus } from '../http/answer-status.ts';
import type { BodyLimit, Route, RouteHandler } from '../http/route.ts';
import { OPENAI_SSE, writeSse } from '../http/sse-writer.ts';
import type { Pipeline } from '../pipeline/pipeline.ts';
import { type ParsedCompletion, parseChatRequest, parseTextRequest } from '../request/parse-request.ts';

export interface CompletionRouteDependencies {
  pipeline: Pipeline;
  metrics: Metrics;
  logger: Logger;
  /** The most a body may hold, read at each request (`PUT /api/config` changes it). */
  bodyLimit: BodyLimit;
}

/** gw's native completion paths: `/v1/chat/completions`, `/chat/completions`, `/v1/text/completions`. */
export function completionRoutes(dependencies: CompletionRouteDependencies): Route[] {
  const { pipeline, metrics, logger } = dependencies;

  const completion =
    (parse: (body: unknown, bytes: number) => ParsedCompletion): RouteHandler =>
    async (request, response, context) => {
      const body = await readBody(request, dependencies.bodyLimit.current().max_request_body_bytes);
      const parsed = parse(parseJson(body), body.length);
      const call = {
        requestId: context.requestId,
        headers: request.headers,
        parsed,
        signal: abortOnClose(response),
        span: context.span,
        log: context.log,
        answerHeaders: response,
      };
      if (parsed.stream) {
        await writeSse({
          response,
          items: await pipeline.stream(call),
          context,
          framing: OPENAI_SSE,
          metrics,
          logger,
        });
        return;
      }
      const result = await pipeline.complete(call);
      context.provider = result.provider;
      const payload = result.json ?? JSON.stringify(result.response);
      response.writeHead(answerStatus(result.response.extra_fields), {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(payload),
        'x-request-id': context.requestId,
      });
      response.end(payload);
    };

  return [
    { method: 'POST', path: '/v1/chat/completions', handler: completion(parseChatRequest) },
    { method: 'POST', path: '/chat/completions', handler: completion(parseChatRequest) },
    { method: 'POST', path: '/v1/text/completions', handler: completion(parseTextRequest) },
  ];
}
