import { type CompletionResponse, PASSTHROUGH_ROUTES, type TextChoice } from '@gw/shared';
import type { Route, RouteGroup, RouteHandler } from '../../http/route.ts';
import { OPENAI_SSE, relayingNative } from '../../http/sse-writer.ts';
import {
  type ParsedCompletion,
  parseChatRequest,
  parseTextRequest,
  type Target,
} from '../../request/parse-request.ts';
import { forwarding, PASSTHROUGH_METHODS } from '../passthrough/passthrough-routes.ts';
import {
  answerCompletion,
  answerEmbeddings,
  readJsonBody,
  type SurfaceDependencies,
  servedJson,
} from '../shared/surface-call.ts';
import { surfaceTarget } from '../shared/surface-target.ts';
import { chatChunksToResponsesEvents } from './chat-chunks-to-responses-events.ts';
import { chatToResponses } from './chat-to-responses.ts';
import { embeddingsToOpenAi, openAiToEmbeddings } from './openai-embeddings.ts';
import { responsesToChat } from './responses-to-chat.ts';

/** How a surface of the OpenAI family names providers: its default, and aliases of prefixes. */
export interface OpenAiFlavour {
  /** The provider of a model without a `provider/` prefix. */
  defaultProvider: string;
  aliases?: Readonly<Record<string, string>>;
}

/** Re-targets a parsed request whose model carried no provider (gw's own paths leave it empty). */
function withProvider(parsed: ParsedCompletion, flavour: OpenAiFlavour): ParsedCompletion {
  const { target } = parsed;
  if (target.provider === '') parsed.target = { provider: flavour.defaultProvider, model: target.model };
  else if (flavour.aliases?.[target.provider]) {
    parsed.target = { provider: flavour.aliases[target.provider]!, model: target.model };
  }
  return parsed;
}

/** A text completion as OpenAI's `text_completion` object (gw's own answer also carries `message`). */
function textCompletionToOpenAi(completion: CompletionResponse): unknown {
  return {
    ...completion,
    object: 'text_completion',
    choices: (completion.choices as Array<TextChoice & { message?: unknown }>).map((choice) => ({
      index: choice.index,
      text: choice.text,
      logprobs: null,
      finish_reason: choice.finish_reason,
    })),
  };
}

/**
 * The OpenAI-shaped operations gw translates (chat, completions, embeddings, responses), served by any
 * provider, keyed by the path below the surface's prefix (and its optional `/v1`).
 */
export function openAiOperations(
  dependencies: SurfaceDependencies,
  flavour: OpenAiFlavour,
): Record<string, RouteHandler> {
  const target = (model: string): Target =>
    surfaceTarget(model, flavour.defaultProvider, flavour.aliases ? { aliases: flavour.aliases } : {});
  return {
    '/chat/completions': async (request, response, context) => {
      const body = await readJsonBody(request, dependencies);
      await answerCompletion({
        dependencies,
        request,
        response,
        context,
        parsed: withProvider(parseChatRequest(body), flavour),
        render: servedJson,
        framing: () => OPENAI_SSE,
      });
    },
    '/completions': async (request, response, context) => {
      const body = await readJsonBody(request, dependencies);
      await answerCompletion({
        dependencies,
        request,
        response,
        context,
        parsed: withProvider(parseTextRequest(body), flavour),
        render: (result) => ({ json: textCompletionToOpenAi(result.response) }),
        framing: () => OPENAI_SSE,
      });
    },
    '/embeddings': async (request, response, context) => {
      const body = await readJsonBody(request, dependencies);
      const { parsed, base64 } = openAiToEmbeddings(body, target);
      await answerEmbeddings({
        dependencies,
        request,
        response,
        context,
        parsed,
        render: (result) => embeddingsToOpenAi(result, base64),
      });
    },
    '/responses': async (request, response, context) => {
      const body = await readJsonBody(request, dependencies);
      const parsed = responsesToChat(body, target);
      const beta = request.headers['openai-beta'];
      if (parsed.native && typeof beta === 'string') parsed.native.headers['openai-beta'] = beta;
      const echo = body as Parameters<typeof chatToResponses>[1];
      await answerCompletion({
        dependencies,
        request,
        response,
        context,
        parsed,
        // OpenAI's own Responses API answered the request as it came: its answer goes back as it came.
        render: (result) => ({
          json: result.native ?? chatToResponses(result.response, echo, context.requestId),
        }),
        framing: () => relayingNative(chatChunksToResponsesEvents({ requestId: context.requestId, echo })),
      });
    },
  };
}

/**
 * `/openai/v1/…` and `/openai/…`: OpenAI's API for applications written against the OpenAI SDK. Chat,
 * completions, embeddings and responses are translated (any provider serves them; a bare model is
 * OpenAI's); the rest (models, audio, images, files, batches…) is the pass-through family. Errors are
 * DESIGN.md §6's body, whose `error` member is OpenAI's own error object.
 */
export function openAiRoutes(dependencies: SurfaceDependencies): RouteGroup {
  const operations = openAiOperations(dependencies, { defaultProvider: 'openai' });
  const routes = ['/openai/v1', '/openai'].flatMap((base): Route[] => [
    ...Object.entries(operations).map(([path, handler]) => ({
      method: 'POST' as const,
      path: `${base}${path}`,
      handler,
    })),
    ...PASSTHROUGH_ROUTES.flatMap(({ root, operation }) => {
      const handler = forwarding(dependencies, base, operation);
      const below = { method: PASSTHROUGH_METHODS, path: `${base}${root}/*`, handler };
      // A root gw translates (`/embeddings`) is that operation; only the paths below it are forwarded.
      return operations[root] ? [below] : [{ ...below, path: `${base}${root}` }, below];
    }),
  ]);
  return { prefix: '/openai', routes };
}
