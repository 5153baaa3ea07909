import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { CompletionResult, EmbeddingsResult, Served } from '@gw/router';
import { type Logger, type Metrics, parseJson, readBody, throttledLog, toGatewayError } from '@gw/shared';
import { abortOnClose } from '../../http/abort-on-close.ts';
import { answerStatus } from '../../http/answer-status.ts';
import type { BodyLimit, RequestContext } from '../../http/route.ts';
import { type SseFraming, writeSse } from '../../http/sse-writer.ts';
import type { Pipeline } from '../../pipeline/pipeline.ts';
import type { ParsedCompletion } from '../../request/parse-request.ts';

/** What a surface's routes use: the same dependencies as every route module. */
export interface SurfaceDependencies {
  pipeline: Pipeline;
  metrics: Metrics;
  logger: Logger;
  /** The most a body may hold, read at each request (`PUT /api/config` changes it). */
  bodyLimit: BodyLimit;
}

/** Reads and parses a JSON body (bounded by the request size limit). */
export async function readJsonBody(
  request: IncomingMessage,
  dependencies: SurfaceDependencies,
): Promise<unknown> {
  return parseJson(await readBody(request, dependencies.bodyLimit.current().max_request_body_bytes));
}

/** The non-streaming answer of a surface: its own JSON shape, plus any headers its SDK reads. */
export interface SurfaceAnswer {
  json: unknown;
  headers?: Record<string, string | number>;
}

interface SurfaceCall {
  dependencies: SurfaceDependencies;
  request: IncomingMessage;
  response: ServerResponse;
  context: RequestContext;
  parsed: ParsedCompletion;
  /** Headers the virtual key is looked for in (a surface may add one it found elsewhere). */
  headers?: IncomingHttpHeaders;
}

function pipelineCall(options: SurfaceCall) {
  return {
    requestId: options.context.requestId,
    headers: options.headers ?? options.request.headers,
    parsed: options.parsed,
    signal: abortOnClose(options.response),
    span: options.context.span,
    log: options.context.log,
    answerHeaders: options.response,
  };
}

/** The router's answer as JSON text: the transport's own text when it has it, else serialized once here. */
export function servedJson(result: Served<unknown>): string {
  return result.json ?? JSON.stringify(result.response);
}

function writeAnswer(
  options: SurfaceCall,
  provider: string,
  rendered: SurfaceAnswer | string,
  status: 200 | 246 = 200,
): void {
  const { response, context } = options;
  context.provider = provider;
  const payload = typeof rendered === 'string' ? rendered : JSON.stringify(rendered.json);
  response.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
    'x-request-id': context.requestId,
    ...(typeof rendered === 'string' ? {} : rendered.headers),
  });
  response.end(payload);
}

/**
 * Runs a completion that came in by a surface (or by gw's native paths) through the shared pipeline and
 * answers in the surface's shape: `render` for a whole answer, a fresh `framing` for a stream.
 */
export async function answerCompletion(
  options: SurfaceCall & {
    render: (result: CompletionResult) => SurfaceAnswer | string;
    framing: () => SseFraming;
  },
): Promise<void> {
  const { dependencies, response, context } = options;
  if (options.parsed.stream) {
    await writeSse({
      response,
      items: await dependencies.pipeline.stream(pipelineCall(options)),
      context,
      framing: options.framing(),
      metrics: dependencies.metrics,
      logger: dependencies.logger,
    });
    return;
  }
  const result = await dependencies.pipeline.complete(pipelineCall(options));
  writeAnswer(options, result.provider, options.render(result), answerStatus(result.response.extra_fields));
}

/** Runs an embeddings request through the shared pipeline and answers in the surface's shape. */
export async function answerEmbeddings(
  options: SurfaceCall & { render: (result: EmbeddingsResult) => SurfaceAnswer | string },
): Promise<void> {
  const result = await options.dependencies.pipeline.embed(pipelineCall(options));
  writeAnswer(options, result.provider, options.render(result));
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
  // An outage fails every request alike: one line per kind of failure and 10 s, then a count.
  const requestFailed = throttledLog(logger, 'error');
  return (response, thrown, context) => {
    const error = toGatewayError(thrown);
    if (error.status >= 500 && !error.upstream)
      requestFailed(
        `${error.status}:${error.type}:${error.code ?? ''}`,
        { err: thrown, requestId: context.requestId },
        'request failed',
      );
    mapper(response, error, context);
  };
}
