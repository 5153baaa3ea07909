import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { CompleteResult } from '@gw/router';
import {
  type CompletionResponse,
  type Logger,
  type Metrics,
  parseJson,
  readBody,
  toGatewayError,
} from '@gw/shared';
import type { CompletionPipeline } from '../../core/completion-pipeline.ts';
import type { ParsedCompletion } from '../../core/parse-request.ts';
import type { RequestContext } from '../../core/route.ts';
import { abortOnClose } from '../../core/routes/completion-routes.ts';
import { type SseFraming, writeSse } from '../../core/sse-writer.ts';

/** What a surface's routes use: the same dependencies as every route module. */
export interface SurfaceDependencies {
  pipeline: CompletionPipeline;
  metrics: Metrics;
  logger: Logger;
  maxBodyBytes: number;
}

/** Reads and parses a JSON body (bounded by the request size limit). */
export async function readJsonBody(
  request: IncomingMessage,
  dependencies: SurfaceDependencies,
): Promise<{ body: unknown; bytes: number }> {
  const raw = await readBody(request, dependencies.maxBodyBytes);
  return { body: parseJson(raw), bytes: raw.length };
}

/** The non-streaming answer of a surface: its own JSON shape, plus any headers its SDK reads. */
export interface SurfaceAnswer {
  json: unknown;
  headers?: Record<string, string | number>;
}

/**
 * Runs a completion that came in by a surface through the shared pipeline (authorize, route, settle) and
 * answers in the surface's shape: `render` for a whole answer, a fresh `framing` for a stream.
 */
export async function answerCompletion(options: {
  dependencies: SurfaceDependencies;
  request: IncomingMessage;
  response: ServerResponse;
  context: RequestContext;
  parsed: ParsedCompletion;
  /** Headers the virtual key is looked for in (a surface may add one it found elsewhere). */
  headers?: IncomingHttpHeaders;
  render: (result: CompleteResult) => SurfaceAnswer | string;
  framing: () => SseFraming;
}): Promise<void> {
  const { dependencies, response, context, parsed } = options;
  const call = {
    requestId: context.requestId,
    headers: options.headers ?? options.request.headers,
    parsed,
    signal: abortOnClose(response),
  };
  if (parsed.stream) {
    await writeSse({
      response,
      items: await dependencies.pipeline.stream(call),
      context,
      framing: options.framing(),
      metrics: dependencies.metrics,
      logger: dependencies.logger,
    });
    return;
  }
  const result = await dependencies.pipeline.complete(call);
  context.provider = result.provider;
  const rendered = options.render(result);
  const payload = typeof rendered === 'string' ? rendered : JSON.stringify(rendered.json);
  response.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    'x-request-id': context.requestId,
    ...(typeof rendered === 'string' ? {} : rendered.headers),
  });
  response.end(payload);
}

/** The router's answer as the CompletionResponse it is (surfaces translate from it). */
export function completionOf(result: CompleteResult): CompletionResponse {
  return JSON.parse(result.body) as CompletionResponse;
}

/** Writes a JSON answer (models lists, token counts, embeddings). */
export function writeJson(
  response: ServerResponse,
  context: RequestContext,
  value: unknown,
  headers: Record<string, string | number> = {},
): void {
  const payload = JSON.stringify(value);
  response.writeHead(200, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    'x-request-id': context.requestId,
    ...headers,
  });
  response.end(payload);
}

/** A surface's error mapper, logging what is gw's own failure (5xx) as the default mapper does. */
export function loggingErrors(
  mapper: (response: ServerResponse, thrown: unknown, context: RequestContext) => void,
  logger: Logger,
): (response: ServerResponse, thrown: unknown, context: RequestContext) => void {
  return (response, thrown, context) => {
    const error = toGatewayError(thrown);
    if (error.status >= 500 && !error.upstream)
      logger.error({ err: thrown, requestId: context.requestId }, 'request failed');
    mapper(response, error, context);
  };
}
