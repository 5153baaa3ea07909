import {
  type AdapterContext,
  type ChatInput,
  DEFAULT_CAPABILITIES,
  type EmbeddingsInput,
  type NativeChatInput,
  type ProviderAdapter,
} from '../adapter.ts';
import { type AnthropicRequestBody, createAnthropicAdapter } from '../anthropic/index.ts';
import { createGeminiAdapter } from '../gemini/gemini-adapter.ts';
import { withTextViaChat } from '../text-via-chat.ts';
import {
  readVertexKeySettings,
  type VertexKeySettings,
  vertexBaseUrl,
  vertexModelPath,
} from './vertex-config.ts';
import { vertexEmbeddings } from './vertex-embeddings.ts';
import { VertexTokenSource } from './vertex-token-source.ts';

/** Claude on Vertex names its Messages API version in the body, in place of the `anthropic-version` header. */
const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** Claude models are served by Anthropic's publisher endpoint and speak the Messages format. */
function isClaude(model: string): boolean {
  return model.startsWith('claude');
}

export interface VertexAdapterOptions {
  /** Shared token cache; a fresh one by default. */
  tokens?: VertexTokenSource;
}

/**
 * Vertex AI: Gemini models through the Gemini translation, Claude models through the Anthropic one, each
 * reused with Vertex's URL and an OAuth2 token of the key's service account in place of an API key.
 */
export function createVertexAdapter(options: VertexAdapterOptions = {}): ProviderAdapter {
  const tokens = options.tokens ?? new VertexTokenSource();

  /** The key's settings, the base URL of its region and the Bearer header of its service account. */
  async function prepare(context: AdapterContext) {
    const settings: VertexKeySettings = readVertexKeySettings(
      context.provider,
      context.key,
      context.environment,
    );
    const token = await tokens.accessToken({
      provider: context.provider,
      keyId: context.key?.id ?? '',
      ...settings,
    });
    return {
      settings,
      baseUrl: vertexBaseUrl(context.baseUrl, settings.region),
      headers: { authorization: `Bearer ${token}` },
    };
  }

  const gemini = createGeminiAdapter({
    endpoint: async ({ model, method }, context) => {
      const { settings, baseUrl, headers } = await prepare(context);
      return { baseUrl, headers, path: `${vertexModelPath(settings, 'google', model)}:${method}` };
    },
  });

  // The Anthropic adapter resolves paths against the context's base URL, so Claude calls get a context
  // already pointing at the region; the path and headers read the same key settings.
  const claude = createAnthropicAdapter({
    path: (model, context, stream) => {
      const settings = readVertexKeySettings(context.provider, context.key, context.environment);
      return {
        path: `${vertexModelPath(settings, 'anthropic', model)}:${stream ? 'streamRawPredict' : 'rawPredict'}`,
      };
    },
    headers: async (context) => (await prepare(context)).headers,
    adjustBody: ({ model: _model, ...body }: AnthropicRequestBody) => ({
      ...body,
      anthropic_version: VERTEX_ANTHROPIC_VERSION,
    }),
  });

  function claudeContext(context: AdapterContext): AdapterContext {
    const settings = readVertexKeySettings(context.provider, context.key, context.environment);
    return { ...context, baseUrl: vertexBaseUrl(context.baseUrl, settings.region) };
  }

  return withTextViaChat({
    capabilities: { ...DEFAULT_CAPABILITIES, operations: ['chat', 'chat_stream', 'embeddings'] },
    async chat(input: ChatInput, context: AdapterContext) {
      if (isClaude(input.model)) return claude.chat(input, claudeContext(context));
      return gemini.chat(input, context);
    },
    async *chatStream(input: ChatInput, context: AdapterContext) {
      if (isClaude(input.model)) yield* claude.chatStream(input, claudeContext(context));
      else yield* gemini.chatStream(input, context);
    },
    // Gemini on Vertex takes a GenerateContent request verbatim, Claude a Messages one (its version in the
    // body, the model in the path).
    nativeFormat: (model: string) => (isClaude(model) ? claude.nativeFormat() : gemini.nativeFormat()),
    nativeChat: (input: NativeChatInput, context: AdapterContext) =>
      isClaude(input.model)
        ? claude.nativeChat(input, claudeContext(context))
        : gemini.nativeChat(input, context),
    nativeChatStream: (input: NativeChatInput, context: AdapterContext) =>
      isClaude(input.model)
        ? claude.nativeChatStream(input, claudeContext(context))
        : gemini.nativeChatStream(input, context),
    async embeddings(input: EmbeddingsInput, context: AdapterContext) {
      const { settings, baseUrl, headers } = await prepare(context);
      return vertexEmbeddings(
        input,
        { ...context, baseUrl },
        {
          path: `${vertexModelPath(settings, 'google', input.model)}:predict`,
          headers: { 'content-type': 'application/json', ...headers },
        },
      );
    },
  });
}

export const vertexAdapter: ProviderAdapter = createVertexAdapter();
