import {
  type ChatChoice,
  type ChatCompletionChunk,
  type FinishReason,
  GatewayError,
  type TextChoice,
} from '@gw/shared';
import type {
  AdapterContext,
  AdapterResult,
  Capabilities,
  ChatInput,
  EmbeddingsInput,
  EmbeddingsResult,
  ProviderAdapter,
  TextInput,
} from '../adapter.ts';
import { callJson, callSse, parseEventJson } from '../upstream-call.ts';
import { mapOpenAiUsage } from './map-openai-usage.ts';
import { readOpenAiErrorMessage } from './openai-error.ts';
import {
  openAiChatResponseSchema,
  openAiChunkSchema,
  openAiEmbeddingsSchema,
  openAiTextResponseSchema,
} from './openai-schemas.ts';

export interface OpenAiCompatibleOptions {
  capabilities: Capabilities;
  /** Paths of the operations, relative to the base URL. */
  paths?: { chat?: string; text?: string; embeddings?: string };
  /** How the key is sent; defaults to `Authorization: Bearer`. */
  authHeaders?: (context: AdapterContext) => Record<string, string>;
  /** Last touch on the body before it is sent (a provider's quirks). */
  adjustBody?: (body: Record<string, unknown>, context: AdapterContext) => Record<string, unknown>;
  /** Rewrites the path per request (azure deployments). */
  resolvePath?: (
    path: string,
    model: string,
    context: AdapterContext,
  ) => { path: string; query?: Record<string, string> };
}

const DEFAULT_PATHS = { chat: '/v1/chat/completions', text: '/v1/completions', embeddings: '/v1/embeddings' };

export function bearerAuth(context: AdapterContext): Record<string, string> {
  return context.key?.value ? { authorization: `Bearer ${context.key.value}` } : {};
}

/** SPEC's `stop_sequences` is OpenAI's `stop`. */
function toOpenAiParams(params: Record<string, unknown>): Record<string, unknown> {
  if (params['stop_sequences'] === undefined) return params;
  const { stop_sequences, ...rest } = params;
  return { stop: stop_sequences, ...rest };
}

function finishReason(value: string | null | undefined): FinishReason {
  if (value === 'stop' || value === 'length' || value === 'tool_calls' || value === 'content_filter')
    return value;
  if (value === 'function_call') return 'tool_calls';
  return value ? 'stop' : null;
}

/**
 * The OpenAI wire format. OpenAI itself, and every OpenAI-compatible provider (groq, mistral, ollama, sgl,
 * azure with its own auth and paths) is this adapter with options.
 */
export function createOpenAiCompatibleAdapter(options: OpenAiCompatibleOptions): ProviderAdapter {
  const paths = { ...DEFAULT_PATHS, ...options.paths };
  const authHeaders = options.authHeaders ?? bearerAuth;
  const adjust = options.adjustBody ?? ((body: Record<string, unknown>) => body);

  function call(
    operation: keyof typeof DEFAULT_PATHS,
    model: string,
    body: Record<string, unknown>,
    context: AdapterContext,
  ) {
    const route = options.resolvePath?.(paths[operation], model, context) ?? { path: paths[operation] };
    return {
      path: route.path,
      query: route.query,
      headers: { 'content-type': 'application/json', ...authHeaders(context) },
      body: JSON.stringify(adjust(body, context)),
    };
  }

  async function* streamChunks(
    operation: 'chat' | 'text',
    model: string,
    body: Record<string, unknown>,
    context: AdapterContext,
  ): AsyncGenerator<ChatCompletionChunk> {
    const streamBody = { ...body, stream: true, stream_options: { include_usage: true } };
    for await (const event of callSse(
      context,
      call(operation, model, streamBody, context),
      readOpenAiErrorMessage,
    )) {
      if (event.data === '[DONE]') return;
      const payload = parseEventJson(context.provider, event.data);
      if (typeof payload === 'object' && payload !== null && 'error' in payload) {
        throw streamError(context, payload);
      }
      const chunk = openAiChunkSchema.parse(payload);
      yield {
        ...(chunk as unknown as ChatCompletionChunk),
        usage: chunk.usage ? mapOpenAiUsage(chunk.usage) : chunk.usage === null ? null : undefined,
      };
    }
  }

  const adapter: ProviderAdapter = {
    capabilities: options.capabilities,

    async chat(input: ChatInput, context: AdapterContext): Promise<AdapterResult<ChatChoice>> {
      const body = { ...toOpenAiParams(input.params), model: input.model, messages: input.messages };
      const { raw, parsed } = await callJson(context, call('chat', input.model, body, context), {
        schema: openAiChatResponseSchema,
        readMessage: readOpenAiErrorMessage,
      });
      return {
        id: parsed.id,
        created: parsed.created,
        model: parsed.model || input.model,
        systemFingerprint: parsed.system_fingerprint,
        choices: parsed.choices.map((choice) => ({
          ...(choice as unknown as ChatChoice),
          message: {
            ...(choice.message as ChatChoice['message']),
            role: 'assistant',
            content: choice.message.content ?? null,
          },
          finish_reason: finishReason(choice.finish_reason),
        })),
        usage: mapOpenAiUsage(parsed.usage),
        raw,
      };
    },

    chatStream(input: ChatInput, context: AdapterContext) {
      const body = { ...toOpenAiParams(input.params), model: input.model, messages: input.messages };
      return streamChunks('chat', input.model, body, context);
    },

    async text(input: TextInput, context: AdapterContext): Promise<AdapterResult<TextChoice>> {
      const body = { ...toOpenAiParams(input.params), model: input.model, prompt: input.prompt };
      const { raw, parsed } = await callJson(context, call('text', input.model, body, context), {
        schema: openAiTextResponseSchema,
        readMessage: readOpenAiErrorMessage,
      });
      return {
        id: parsed.id,
        created: parsed.created,
        model: parsed.model || input.model,
        choices: parsed.choices.map((choice) => ({
          index: choice.index,
          text: choice.text,
          finish_reason: finishReason(choice.finish_reason),
        })),
        usage: mapOpenAiUsage(parsed.usage),
        raw,
      };
    },

    textStream(input: TextInput, context: AdapterContext) {
      const body = { ...toOpenAiParams(input.params), model: input.model, prompt: input.prompt };
      return streamChunks('text', input.model, body, context);
    },

    async embeddings(input: EmbeddingsInput, context: AdapterContext): Promise<EmbeddingsResult> {
      const body = { ...input.params, model: input.model, input: input.input };
      const { raw, parsed } = await callJson(context, call('embeddings', input.model, body, context), {
        schema: openAiEmbeddingsSchema,
        readMessage: readOpenAiErrorMessage,
      });
      return {
        model: parsed.model || input.model,
        data: parsed.data.map((item) => ({ index: item.index, embedding: item.embedding })),
        usage: mapOpenAiUsage(parsed.usage),
        raw,
      };
    },
  };
  return adapter;
}

/** An error event inside a stream that had already started. */
function streamError(context: AdapterContext, payload: object): GatewayError {
  return new GatewayError({
    type: 'upstream_error',
    status: 502,
    message: readOpenAiErrorMessage(payload) ?? `${context.provider} stream failed`,
    upstream: true,
    upstreamBody: payload,
    provider: context.provider,
  });
}

export const openAiAdapter = createOpenAiCompatibleAdapter({
  capabilities: {
    operations: ['chat', 'chat_stream', 'text', 'text_stream', 'embeddings'],
    tools: true,
    vision: true,
    textViaChat: false,
    authOptional: false,
    requiresBaseUrl: false,
  },
});
