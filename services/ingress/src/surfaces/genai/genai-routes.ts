import type { IncomingHttpHeaders } from 'node:http';
import { GatewayError } from '@gw/shared';
import type { Route, RouteGroup, RouteHandler } from '../../http/route.ts';
import { relayingNative } from '../../http/sse-writer.ts';
import { estimateOf } from '../../request/estimate-tokens.ts';
import { handlePassthrough } from '../passthrough/passthrough-routes.ts';
import {
  answerCompletion,
  answerEmbeddings,
  loggingErrors,
  readJsonBody,
  type SurfaceDependencies,
  writeJson,
} from '../shared/surface-call.ts';
import { surfaceTarget } from '../shared/surface-target.ts';
import { chatChunksToGenAiEvents } from './chat-chunks-to-genai-events.ts';
import { chatToGenAi } from './chat-to-genai.ts';
import { embeddingsToGenAi, genAiToEmbeddings } from './genai-embeddings.ts';
import { sendGenAiError } from './genai-error.ts';
import { genAiToChat } from './genai-to-chat.ts';

const VERSIONS = ['v1beta', 'v1'] as const;
const METHODS = [
  'generateContent',
  'streamGenerateContent',
  'embedContent',
  'batchEmbedContents',
  'countTokens',
] as const;
type GenAiMethod = (typeof METHODS)[number];

/** The model of a path: `gemini-…`, or `<provider>/<model>` (sent as is or URL-encoded). */
function modelTarget(encoded: string) {
  let model: string;
  try {
    model = decodeURIComponent(encoded);
  } catch {
    throw new GatewayError({
      type: 'invalid_request',
      message: `model '${encoded}' is badly encoded`,
    });
  }
  return surfaceTarget(model.startsWith('models/') ? model.slice('models/'.length) : model, 'gemini');
}

/** The virtual key may also come as `?key=` (Google's API-key query parameter). */
function withQueryKey(headers: IncomingHttpHeaders, url: string): IncomingHttpHeaders {
  const query = url.indexOf('?');
  if (query === -1) return headers;
  const key = new URLSearchParams(url.slice(query + 1)).get('key');
  return key && !headers['x-gw-vk'] ? { ...headers, 'x-gw-vk': key } : headers;
}

/**
 * `/genai/v1beta/models/{model}:{method}` and `/genai/v1/models/{model}:{method}`: the Gemini API for
 * applications written against @google/genai (`generateContent`, `streamGenerateContent`, `countTokens`,
 * `embedContent`, `batchEmbedContents`). `gemini-…` goes to Gemini, `<provider>/<model>` to that
 * provider. The virtual key comes as `x-goog-api-key` (what the SDK sends) or `?key=`.
 */
export function genAiRoutes(dependencies: SurfaceDependencies): RouteGroup {
  const sendError = loggingErrors(sendGenAiError, dependencies.logger);

  /** `GET models` and `GET models/{model}`: Gemini's own catalogue, forwarded. */
  const models: RouteHandler = async (request, response, context) => {
    const url = request.url ?? '';
    const query = url.indexOf('?');
    const search = query === -1 ? '' : url.slice(query);
    await handlePassthrough({
      dependencies,
      request,
      response,
      context,
      operation: 'models',
      path: `/models${context.wildcard ? `/${context.wildcard}` : ''}${search}`,
      defaultProvider: 'gemini',
    });
  };

  const serve =
    (method: GenAiMethod): RouteHandler =>
    async (request, response, context) => {
      const url = request.url ?? '';
      const headers = withQueryKey(request.headers, url);
      const target = modelTarget(context.wildcard);
      const body = await readJsonBody(request, dependencies);
      switch (method) {
        case 'generateContent':
        case 'streamGenerateContent': {
          const stream = method === 'streamGenerateContent';
          const sse = new URLSearchParams(url.slice(url.indexOf('?') + 1)).get('alt') === 'sse';
          await answerCompletion({
            dependencies,
            request,
            response,
            context,
            headers,
            parsed: genAiToChat({ body, target, stream, sse }),
            // A provider of Gemini's format answered the request as it came: its answer goes back as it came.
            render: (result) => ({ json: result.native ?? chatToGenAi(result.response, context.requestId) }),
            framing: () => relayingNative(chatChunksToGenAiEvents({ requestId: context.requestId, sse })),
          });
          return;
        }
        case 'embedContent':
        case 'batchEmbedContents': {
          const batch = method === 'batchEmbedContents';
          await answerEmbeddings({
            dependencies,
            request,
            response,
            context,
            headers,
            parsed: genAiToEmbeddings({ body, target, batch }),
            render: (result) => ({ json: embeddingsToGenAi(result.response, batch) }),
          });
          return;
        }
        case 'countTokens': {
          // gw's estimate whoever serves the model (Gemini's own counter is reachable through pass-through).
          const wrapped = (body as { generateContentRequest?: unknown }).generateContentRequest;
          const counted = genAiToChat({
            body: wrapped ?? body,
            field: wrapped ? 'generateContentRequest' : '',
            target,
            stream: false,
            sse: false,
          });
          await dependencies.pipeline.checkCaller({
            requestId: context.requestId,
            headers,
            span: context.span,
          });
          writeJson(response, context, { totalTokens: estimateOf(counted).promptTokens });
          return;
        }
      }
    };

  const routes = VERSIONS.flatMap((version): Route[] => [
    { method: 'GET', path: `/genai/${version}/models`, handler: models },
    { method: 'GET', path: `/genai/${version}/models/*`, handler: models },
    ...METHODS.flatMap((method): Route[] => [
      { method: 'POST', path: `/genai/${version}/models/*:${method}`, handler: serve(method) },
      // `{provider}/{model}` without `models/`: @ai-sdk/google puts a model id that holds a slash in the path
      // as it is (it takes it for a resource name such as `tunedModels/…`).
      { method: 'POST', path: `/genai/${version}/*:${method}`, handler: serve(method) },
    ]),
  ]);
  return { prefix: '/genai', sendError, routes };
}
