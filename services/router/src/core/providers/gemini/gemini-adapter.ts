import type { ChatChoice } from '@gw/shared';
import type { NativeFormat } from '../../router-service.ts';
import {
  type AdapterContext,
  type AdapterResult,
  type Capabilities,
  type ChatInput,
  DEFAULT_CAPABILITIES,
  type EmbeddingsInput,
  type EmbeddingsResult,
  type NativeChatInput,
  type NativePiece,
  type ProviderAdapter,
} from '../adapter.ts';
import { relayMappedStream } from '../native-relay.ts';
import { withTextViaChat } from '../text-via-chat.ts';
import { callJson, callSse } from '../upstream-call.ts';
import { convertToGeminiRequest } from './convert-to-gemini-request.ts';
import { readGeminiErrorMessage } from './gemini-error.ts';
import { geminiEmbeddingsSchema, geminiResponseSchema } from './gemini-schemas.ts';
import { mapGeminiResponse } from './map-gemini-response.ts';
import { mapGeminiStream } from './map-gemini-stream.ts';

/** The Gemini API methods gw calls, as they appear after the model in the URL (`models/{m}:{method}`). */
export type GeminiMethod = 'generateContent' | 'streamGenerateContent' | 'batchEmbedContents';

/** Where one call goes and how it is authenticated. */
export interface GeminiEndpoint {
  /** Overrides the context's base URL (Vertex's regional hosts). */
  baseUrl?: string;
  path: string;
  headers: Record<string, string>;
}

export interface GeminiAdapterOptions {
  /** Capabilities before text completions are added (they are served by chat). */
  capabilities?: Capabilities;
  /** The one piece Google AI Studio and Vertex AI differ in: URL and credentials of a call. */
  endpoint(
    call: { model: string; method: GeminiMethod },
    context: AdapterContext,
  ): GeminiEndpoint | Promise<GeminiEndpoint>;
}

const GEMINI_CAPABILITIES: Capabilities = {
  ...DEFAULT_CAPABILITIES,
  operations: ['chat', 'chat_stream', 'embeddings'],
};

/** `models/gemini-2.5-pro` (as Google's own SDKs name models) and `gemini-2.5-pro` are the same model. */
function bareGeminiModel(model: string): string {
  return model.replace(/^models\//, '');
}

/**
 * A model name as one URL path segment: a `/` or `..` in a requested model must not reach another resource.
 * `@` (Vertex's version separator, `claude-sonnet-4-5@20250929`) stays as Google's SDKs send it.
 */
export function modelPathSegment(model: string): string {
  return encodeURIComponent(model).replace(/%40/g, '@');
}

/**
 * The Gemini wire format (GenerateContent). Google AI Studio is this adapter with an API key; Vertex AI
 * reuses it with its own endpoint and OAuth token.
 */
export function createGeminiAdapter(options: GeminiAdapterOptions) {
  async function target(model: string, method: GeminiMethod, context: AdapterContext) {
    const endpoint = await options.endpoint({ model: bareGeminiModel(model), method }, context);
    return {
      context: endpoint.baseUrl ? { ...context, baseUrl: endpoint.baseUrl } : context,
      headers: { 'content-type': 'application/json', ...endpoint.headers },
      path: endpoint.path,
    };
  }

  return {
    capabilities: options.capabilities ?? GEMINI_CAPABILITIES,

    async chat(input: ChatInput, context: AdapterContext): Promise<AdapterResult<ChatChoice>> {
      const call = await target(input.model, 'generateContent', context);
      const { raw, parsed } = await callJson(
        call.context,
        { path: call.path, headers: call.headers, body: JSON.stringify(convertToGeminiRequest(input)) },
        { schema: geminiResponseSchema, readMessage: readGeminiErrorMessage },
      );
      return mapGeminiResponse(parsed, { raw, model: input.model });
    },

    async *chatStream(input: ChatInput, context: AdapterContext) {
      const call = await target(input.model, 'streamGenerateContent', context);
      const events = callSse(
        call.context,
        {
          path: call.path,
          query: { alt: 'sse' },
          headers: call.headers,
          body: JSON.stringify(convertToGeminiRequest(input)),
        },
        readGeminiErrorMessage,
      );
      yield* mapGeminiStream(events, { provider: context.provider, model: input.model });
    },

    /** A GenerateContent request as the caller sent it (the model is in the path, not the body). */
    nativeFormat: (): NativeFormat => 'gemini',

    async nativeChat(input: NativeChatInput, context: AdapterContext): Promise<AdapterResult<ChatChoice>> {
      const call = await target(input.model, 'generateContent', context);
      const { raw, parsed } = await callJson(
        call.context,
        { path: call.path, headers: call.headers, body: JSON.stringify(input.native.body) },
        { schema: geminiResponseSchema, readMessage: readGeminiErrorMessage },
      );
      return mapGeminiResponse(parsed, { raw, model: input.model });
    },

    async *nativeChatStream(input: NativeChatInput, context: AdapterContext): AsyncGenerator<NativePiece> {
      const call = await target(input.model, 'streamGenerateContent', context);
      const events = callSse(
        call.context,
        {
          path: call.path,
          query: { alt: 'sse' },
          headers: call.headers,
          body: JSON.stringify(input.native.body),
        },
        readGeminiErrorMessage,
      );
      yield* relayMappedStream(events, (read) =>
        mapGeminiStream(read, { provider: context.provider, model: input.model }),
      );
    },

    async embeddings(input: EmbeddingsInput, context: AdapterContext): Promise<EmbeddingsResult> {
      const model = bareGeminiModel(input.model);
      const call = await target(model, 'batchEmbedContents', context);
      const texts = typeof input.input === 'string' ? [input.input] : input.input;
      const dimensions = input.params['dimensions'] ?? input.params['output_dimensionality'];
      const taskType = input.params['task_type'] ?? input.params['taskType'];
      const requests = texts.map((text) => ({
        model: `models/${model}`,
        content: { parts: [{ text }] },
        ...(taskType ? { taskType } : {}),
        ...(dimensions ? { outputDimensionality: dimensions } : {}),
      }));
      const { raw, parsed } = await callJson(
        call.context,
        { path: call.path, headers: call.headers, body: JSON.stringify({ requests }) },
        { schema: geminiEmbeddingsSchema, readMessage: readGeminiErrorMessage },
      );
      const promptTokens = parsed.usageMetadata?.promptTokenCount ?? 0;
      return {
        model,
        data: parsed.embeddings.map((embedding, index) => ({ index, embedding: embedding.values })),
        usage: { prompt_tokens: promptTokens, completion_tokens: 0, total_tokens: promptTokens },
        raw,
      };
    },
  } satisfies ProviderAdapter;
}

export const GEMINI_DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com';

/** Gemini has no text completions endpoint: text and text streams run over chat. */
export const geminiAdapter: ProviderAdapter = withTextViaChat(
  createGeminiAdapter({
    endpoint: ({ model, method }, context): GeminiEndpoint => ({
      path: `/v1beta/models/${modelPathSegment(model)}:${method}`,
      headers: context.key?.value ? { 'x-goog-api-key': context.key.value } : {},
    }),
  }),
);
