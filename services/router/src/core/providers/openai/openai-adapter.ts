import type { ChatChoice, TextChoice, Usage } from '@gw/shared';
import {
  type AdapterContext,
  type AdapterResult,
  type Capabilities,
  type ChatInput,
  DEFAULT_CAPABILITIES,
  type EmbeddingsInput,
  type EmbeddingsResult,
  type NativeChatInput,
  type ProviderAdapter,
  type TextInput,
} from '../adapter.ts';
import { withoutCacheControl } from '../message-parts.ts';
import { callJson, callSse, type ErrorMessageReader, type UpstreamCall } from '../upstream-call.ts';
import { mapOpenAiChatResponse, mapOpenAiTextResponse } from './map-openai-response.ts';
import { mapResponsesAnswer, relayResponsesStream, responseObjectSchema } from './map-openai-responses.ts';
import { mapOpenAiStream } from './map-openai-stream.ts';
import { mapOpenAiUsage } from './map-openai-usage.ts';
import { readOpenAiErrorMessage } from './openai-error.ts';
import {
  type OpenAiChunk,
  type OpenAiUsage,
  openAiChatResponseSchema,
  openAiEmbeddingsSchema,
  openAiTextResponseSchema,
} from './openai-schemas.ts';
import { plainOpenAiChatAnswer } from './plain-openai-answer.ts';

/** The operations of the OpenAI wire format, each with its own path. */
export type OpenAiOperation = 'chat' | 'text' | 'embeddings';

export interface OpenAiCompatibleOptions {
  capabilities: Capabilities;
  /** Paths of the operations, relative to the base URL. */
  paths?: Partial<Record<OpenAiOperation, string>>;
  /** How the key is sent; defaults to `Authorization: Bearer`. */
  authHeaders?: (context: AdapterContext) => Record<string, string>;
  /** Last touch on the body before it is sent (a provider's quirks); may throw to refuse a request. */
  adjustBody?: (
    body: Record<string, unknown>,
    context: AdapterContext,
    operation: OpenAiOperation,
  ) => Record<string, unknown>;
  /** Rewrites the path per request (azure deployments). */
  resolvePath?: (
    path: string,
    model: string,
    context: AdapterContext,
  ) => { path: string; query?: Record<string, string> };
  /** A base URL per request, overriding the router's (azure's endpoint from the key's config). */
  resolveBaseUrl?: (context: AdapterContext) => string;
  /** Reads the provider's error bodies; defaults to OpenAI's `{ error: { message } }` and its variants. */
  readErrorMessage?: ErrorMessageReader;
  /** Where the provider reports usage in a stream when not in the chunk's `usage` (groq's `x_groq`). */
  readChunkUsage?: (chunk: OpenAiChunk) => OpenAiUsage | null | undefined;
  /** Maps the provider's usage when it reports more than OpenAI's (Mistral's audio seconds); OpenAI's by default. */
  mapUsage?: (usage: OpenAiUsage | null | undefined) => Usage;
  /**
   * The provider's own Responses API: a Responses request is then sent to it as it came (router-service.ts
   * NativeRequest) rather than translated to chat. `path` is relative to the base URL (deployments play no
   * part); `model` names the model in the body (Azure's deployment), the requested one by default.
   */
  responses?: { path: string; model?: (model: string, context: AdapterContext) => string };
}

const DEFAULT_PATHS: Record<OpenAiOperation, string> = {
  chat: '/v1/chat/completions',
  text: '/v1/completions',
  embeddings: '/v1/embeddings',
};

export function bearerAuth(context: AdapterContext): Record<string, string> {
  return context.key?.value ? { authorization: `Bearer ${context.key.value}` } : {};
}

/** The native `stop_sequences` is OpenAI's `stop`. */
function toOpenAiParams(params: Record<string, unknown>): Record<string, unknown> {
  if (params['stop_sequences'] === undefined) return params;
  const { stop_sequences, ...rest } = params;
  return { stop: stop_sequences, ...rest };
}

function chatBody(input: ChatInput): Record<string, unknown> {
  return {
    ...toOpenAiParams(input.params),
    model: input.model,
    messages: withoutCacheControl(input.messages),
  };
}

function textBody(input: TextInput): Record<string, unknown> {
  return { ...toOpenAiParams(input.params), model: input.model, prompt: input.prompt };
}

/**
 * The OpenAI wire format. OpenAI itself, and every OpenAI-compatible provider (groq, mistral, ollama, sgl,
 * azure with its own auth and paths) is this adapter with options.
 */
export function createOpenAiCompatibleAdapter(options: OpenAiCompatibleOptions): ProviderAdapter {
  const paths = { ...DEFAULT_PATHS, ...options.paths };
  const authHeaders = options.authHeaders ?? bearerAuth;
  const adjust = options.adjustBody ?? ((body: Record<string, unknown>) => body);
  const readMessage = options.readErrorMessage ?? readOpenAiErrorMessage;
  const mapUsage = options.mapUsage ?? mapOpenAiUsage;

  /** The context of one call: the router's, or one aimed at the provider's per-request base URL. */
  function target(context: AdapterContext): AdapterContext {
    return options.resolveBaseUrl ? { ...context, baseUrl: options.resolveBaseUrl(context) } : context;
  }

  function call(
    operation: OpenAiOperation,
    model: string,
    body: Record<string, unknown>,
    context: AdapterContext,
  ): UpstreamCall {
    const route = options.resolvePath?.(paths[operation], model, context) ?? { path: paths[operation] };
    return {
      path: route.path,
      query: route.query,
      headers: { 'content-type': 'application/json', ...authHeaders(context) },
      body: JSON.stringify(adjust(body, context, operation)),
    };
  }

  function stream(
    operation: 'chat' | 'text',
    model: string,
    body: Record<string, unknown>,
    context: AdapterContext,
  ) {
    const callContext = target(context);
    const streamBody = { ...body, stream: true, stream_options: { include_usage: true } };
    return mapOpenAiStream(
      callSse(callContext, call(operation, model, streamBody, callContext), readMessage),
      {
        context: callContext,
        object: operation === 'chat' ? 'chat.completion.chunk' : 'text_completion',
        readMessage,
        readChunkUsage: options.readChunkUsage,
        mapUsage,
      },
    );
  }

  /** The caller's Responses request as it came, with the model and `stream` gw decides. */
  function responsesCall(input: NativeChatInput, context: AdapterContext, stream: boolean): UpstreamCall {
    const responses = options.responses!;
    const model = responses.model?.(input.model, context) ?? input.model;
    const beta = input.native.headers['openai-beta'];
    return {
      path: responses.path,
      headers: {
        'content-type': 'application/json',
        ...(beta === undefined ? {} : { 'openai-beta': beta }),
        ...authHeaders(context),
      },
      body: JSON.stringify({ ...input.native.body, model, stream }),
    };
  }

  const responses: Pick<ProviderAdapter, 'nativeFormat' | 'nativeChat' | 'nativeChatStream'> =
    options.responses === undefined
      ? {}
      : {
          nativeFormat: () => 'openai-responses',
          async nativeChat(input: NativeChatInput, context: AdapterContext) {
            const callContext = target(context);
            const { raw, parsed } = await callJson(callContext, responsesCall(input, callContext, false), {
              schema: responseObjectSchema,
              readMessage,
            });
            return mapResponsesAnswer(parsed, { raw, model: input.model });
          },
          nativeChatStream(input: NativeChatInput, context: AdapterContext) {
            const callContext = target(context);
            const events = callSse(callContext, responsesCall(input, callContext, true), readMessage);
            return relayResponsesStream(events, { provider: callContext.provider, model: input.model });
          },
        };

  // Methods of operations a provider lacks are left off, so its capabilities and methods always agree.
  return onlyDeclaredOperations({
    ...responses,
    capabilities: options.capabilities,

    async chat(input: ChatInput, context: AdapterContext): Promise<AdapterResult<ChatChoice>> {
      const callContext = target(context);
      const { raw, parsed } = await callJson(
        callContext,
        call('chat', input.model, chatBody(input), callContext),
        { schema: openAiChatResponseSchema, readPlain: plainOpenAiChatAnswer, readMessage },
      );
      return mapOpenAiChatResponse(parsed, { raw, model: input.model, mapUsage });
    },

    chatStream(input: ChatInput, context: AdapterContext) {
      return stream('chat', input.model, chatBody(input), context);
    },

    async text(input: TextInput, context: AdapterContext): Promise<AdapterResult<TextChoice>> {
      const callContext = target(context);
      const { raw, parsed } = await callJson(
        callContext,
        call('text', input.model, textBody(input), callContext),
        { schema: openAiTextResponseSchema, readMessage },
      );
      return mapOpenAiTextResponse(parsed, { raw, model: input.model, mapUsage });
    },

    textStream(input: TextInput, context: AdapterContext) {
      return stream('text', input.model, textBody(input), context);
    },

    async embeddings(input: EmbeddingsInput, context: AdapterContext): Promise<EmbeddingsResult> {
      const callContext = target(context);
      const body = { ...input.params, model: input.model, input: input.input };
      const { raw, parsed } = await callJson(
        callContext,
        call('embeddings', input.model, body, callContext),
        { schema: openAiEmbeddingsSchema, readMessage },
      );
      return {
        model: parsed.model || input.model,
        data: parsed.data.map((item) => ({ index: item.index, embedding: item.embedding })),
        usage: mapUsage(parsed.usage),
        raw,
      };
    },
  });
}

function onlyDeclaredOperations(adapter: ProviderAdapter): ProviderAdapter {
  const declared = new Set(adapter.capabilities.operations);
  const {
    chat: _chat,
    chatStream: _chatStream,
    text: _text,
    textStream: _textStream,
    embeddings: _embeddings,
    ...rest
  } = adapter;
  const trimmed: ProviderAdapter = rest;
  if (declared.has('chat')) trimmed.chat = adapter.chat;
  if (declared.has('chat_stream')) trimmed.chatStream = adapter.chatStream;
  if (declared.has('text')) trimmed.text = adapter.text;
  if (declared.has('text_stream')) trimmed.textStream = adapter.textStream;
  if (declared.has('embeddings')) trimmed.embeddings = adapter.embeddings;
  return trimmed;
}

export const openAiAdapter = createOpenAiCompatibleAdapter({
  capabilities: {
    ...DEFAULT_CAPABILITIES,
    operations: ['chat', 'chat_stream', 'text', 'text_stream', 'embeddings'],
  },
  responses: { path: '/v1/responses' },
});
