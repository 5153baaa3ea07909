import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import {
  drained,
  invalidRequest,
  PASSTHROUGH_ROUTES,
  type PassthroughOperation,
  parseJson,
  readBody,
} from '@gw/shared';
import { abortOnClose } from '../../http/abort-on-close.ts';
import { relayedHeaders } from '../../http/cors.ts';
import type { RequestContext, Route, RouteHandler } from '../../http/route.ts';
import type { PassthroughContent } from '../../pipeline/guardrail-stage.ts';
import { tokensOfLength } from '../../request/estimate-tokens.ts';
import type { SurfaceDependencies } from '../shared/surface-call.ts';
import { surfaceTarget } from '../shared/surface-target.ts';
import { multipartBoundary, replaceModel, scanMultipartModel } from './multipart-model.ts';
import { createUsageSniffer } from './passthrough-usage.ts';

/** The provider when the call names none (no `x-gw-provider`, no `provider/` prefix on the model). */
const DEFAULT_PASSTHROUGH_PROVIDER = 'openai';

/**
 * Never forwarded: the caller's credentials (gw injects its own provider key), gw's own headers, the caller's
 * provider account selectors (they would not match gw's key), cookies and hop-by-hop headers.
 */
const NOT_FORWARDED = new Set([
  'authorization',
  'x-api-key',
  'api-key',
  'x-goog-api-key',
  'proxy-authorization',
  'cookie',
  'openai-organization',
  'openai-project',
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
  'content-length',
  'x-request-id',
]);

/** The headers of a call as they may go upstream: credentials and hop-by-hop headers removed. */
function forwardedHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || name.startsWith(':') || name.startsWith('x-gw-') || NOT_FORWARDED.has(name))
      continue;
    kept[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return kept;
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

async function* prepend(head: Buffer, rest: AsyncIterator<Uint8Array>): AsyncGenerator<Uint8Array> {
  if (head.length > 0) yield head;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

/** The body of a call, with the provider and model read from it when it names them. */
async function readCall(
  request: IncomingMessage,
  dependencies: SurfaceDependencies,
  providers: { explicit: string | undefined; fallback: string },
  json: Record<string, unknown> | undefined,
) {
  const explicitProvider = providers.explicit;
  const defaultProvider = providers.fallback;
  const headers = forwardedHeaders(request.headers);
  const declaredLength = single(request.headers['content-length']);
  const hasBody =
    json !== undefined ||
    (request.method !== 'GET' &&
      request.method !== 'DELETE' &&
      (declaredLength === undefined
        ? request.headers['transfer-encoding'] !== undefined || request.httpVersionMajor === 2
        : declaredLength !== '0'));
  const resolve = (model: string) => {
    if (explicitProvider || !model)
      return { provider: explicitProvider ?? defaultProvider, model, rewritten: model };
    const target = surfaceTarget(model, defaultProvider);
    return { provider: target.provider, model: target.model, rewritten: target.model };
  };
  if (!hasBody) {
    return {
      headers,
      hasBody: false,
      body: undefined,
      bytes: 0,
      textBytes: 0,
      ...resolve(''),
      content: undefined,
    };
  }
  const contentType = single(request.headers['content-type']) ?? '';
  if (json || /^application\/(.+\+)?json/i.test(contentType)) {
    const raw = json
      ? Buffer.from(JSON.stringify(json))
      : await readBody(request, dependencies.bodyLimit.current().max_request_body_bytes);
    const value = json ?? (parseJson(raw) as Record<string, unknown>);
    const model = typeof value?.['model'] === 'string' ? value['model'] : '';
    const resolved = resolve(model);
    let payload = raw;
    let sent = value;
    if (model && resolved.rewritten !== model) {
      sent = { ...value, model: resolved.rewritten };
      payload = Buffer.from(JSON.stringify(sent));
    }
    headers['content-length'] = String(payload.length);
    const body = (async function* () {
      yield payload;
    })();
    // Guardrails read what is sent; a JSON body that is not an object has no texts they could name.
    const content: PassthroughContent =
      sent !== null && typeof sent === 'object' && !Array.isArray(sent) ? { json: sent } : 'opaque';
    return {
      headers,
      hasBody: true,
      body,
      bytes: payload.length,
      textBytes: payload.length,
      ...resolved,
      content,
    };
  }
  const boundary = multipartBoundary(contentType);
  if (boundary) {
    const scan = await scanMultipartModel(request, boundary);
    const resolved = resolve(scan.model ?? '');
    let head = scan.head;
    if (scan.model && resolved.rewritten !== scan.model) head = replaceModel(scan, resolved.rewritten);
    if (declaredLength !== undefined) {
      headers['content-length'] = String(Number(declaredLength) - (scan.head.length - head.length));
    }
    return {
      headers,
      hasBody: true,
      body: prepend(head, scan.rest),
      bytes: Number(declaredLength ?? 0),
      textBytes: 0,
      ...resolved,
      content: 'opaque' as const,
    };
  }
  if (declaredLength !== undefined) headers['content-length'] = declaredLength;
  return {
    headers,
    hasBody: true,
    body: request,
    bytes: Number(declaredLength ?? 0),
    textBytes: 0,
    ...resolve(''),
    content: 'opaque' as const,
  };
}

/**
 * One pass-through call (docs/surfaces.md), from any path that maps to one (`/v1/<root>…`, and the
 * `/openai` surface's audio, images, files, batches and models): governed like a completion, forwarded with
 * gw's provider key, bodies streamed both ways with back-pressure, usage read from the answer for settlement.
 */
export async function handlePassthrough(options: {
  dependencies: SurfaceDependencies;
  request: IncomingMessage;
  response: ServerResponse;
  context: RequestContext;
  operation: PassthroughOperation;
  /** The path below `/v1`, with the query string. */
  path: string;
  /** The provider when neither `x-gw-provider` nor a `provider/` prefix on the model names one (openai). */
  defaultProvider?: string;
  /** The JSON body when the route already read it (it is forwarded instead of the request's bytes). */
  json?: Record<string, unknown>;
}): Promise<void> {
  const { dependencies, request, response, context } = options;
  const explicit = single(request.headers['x-gw-provider'])?.trim() || undefined;
  const call = await readCall(
    request,
    dependencies,
    {
      explicit,
      fallback: options.defaultProvider ?? DEFAULT_PASSTHROUGH_PROVIDER,
    },
    options.json,
  );
  if (!call.provider) throw invalidRequest('the provider could not be determined; send x-gw-provider');
  context.provider = call.provider;
  const signal = abortOnClose(response);
  const { answer, done } = await dependencies.pipeline.passthrough({
    requestId: context.requestId,
    headers: request.headers,
    // A call that names no model is authorized as `*`: only a key allowed every model of the provider may
    // make it (files and batches can run any model).
    target: { provider: call.provider, model: call.model || '*' },
    request: {
      operation: options.operation,
      method: request.method ?? 'GET',
      path: options.path,
      headers: call.headers,
      hasBody: call.hasBody,
    },
    body: call.body,
    promptTokens: tokensOfLength(call.bytes),
    content: call.content,
    signal,
    span: context.span,
    log: context.log,
  });
  const sniffer = createUsageSniffer(answer, {
    operation: options.operation,
    method: request.method ?? 'GET',
    // Only a JSON body is text a model reads; an upload's bytes are not its tokens.
    promptTokens: tokensOfLength(call.textBytes),
    // Speech is billed by the characters of the JSON body's `input`.
    json: typeof call.content === 'object' ? call.content.json : undefined,
  });
  try {
    response.writeHead(answer.status, {
      ...relayedHeaders(answer.headers, response),
      'x-request-id': context.requestId,
    });
    for await (const chunk of answer.body) {
      sniffer.push(chunk);
      if (!response.write(chunk)) {
        await drained(response);
        if (signal.aborted) return;
      }
    }
    response.end();
  } finally {
    done(await sniffer.finish());
  }
}

/** The methods of every pass-through path: what the providers' APIs take there. */
export const PASSTHROUGH_METHODS = ['GET', 'POST', 'DELETE'] as const;

/** Forwards a pass-through call whose path below `base` (`/v1`, `/openai`…) is the provider's path. */
export function forwarding(
  dependencies: SurfaceDependencies,
  base: string,
  operation: PassthroughOperation,
): RouteHandler {
  return (request, response, context) =>
    handlePassthrough({
      dependencies,
      request,
      response,
      context,
      operation,
      path: (request.url ?? '').slice(base.length),
    });
}

/**
 * `/v1/<root>` and everything below it, for every root of the pass-through family. A root in `served`
 * (`/responses`, `/embeddings`) is served through the pipeline by any provider, translated where the
 * provider needs it, when it is POSTed to itself without `x-gw-provider`; a call that names its provider is
 * forwarded to that provider as it came.
 */
export function passthroughRoutes(
  dependencies: SurfaceDependencies,
  served: Partial<Record<string, RouteHandler>> = {},
): Route[] {
  return PASSTHROUGH_ROUTES.flatMap(({ root, operation }) => {
    const forward = forwarding(dependencies, '/v1', operation);
    const serve = served[root];
    const handler: RouteHandler = serve
      ? (request, response, context) =>
          request.method === 'POST' && request.headers['x-gw-provider'] === undefined
            ? serve(request, response, context)
            : forward(request, response, context)
      : forward;
    return [
      { method: PASSTHROUGH_METHODS, path: `/v1${root}`, handler },
      { method: PASSTHROUGH_METHODS, path: `/v1${root}/*`, handler: forward },
    ];
  });
}
