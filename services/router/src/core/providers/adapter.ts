import type {
  ChatChoice,
  ChatCompletionChunk,
  Message,
  NetworkConfig,
  Operation,
  TextChoice,
  Usage,
} from '@gw/shared';
import type { UpstreamClient } from '../upstream-client.ts';

/** What a provider can do, as data: the router checks it before dispatch. */
export interface Capabilities {
  operations: readonly Operation[];
  tools: boolean;
  vision: boolean;
  /** Text completions are served by converting the prompt to a chat request. */
  textViaChat: boolean;
  /** Requests may go out without a key (local servers such as ollama and sgl). */
  authOptional: boolean;
  /** No default base URL: `network_config.base_url` must be set. */
  requiresBaseUrl: boolean;
}

/** A provider key with its secret resolved. */
export interface ResolvedKey {
  id: string;
  value: string;
  config: Record<string, unknown>;
}

/** Everything an adapter needs for one upstream attempt. */
export interface AdapterContext {
  /** The provider name as configured (a custom provider's own name). */
  provider: string;
  http: UpstreamClient;
  baseUrl: string;
  key: ResolvedKey | undefined;
  network: NetworkConfig;
  timeoutMs: number;
  signal: AbortSignal;
}

export interface ChatInput {
  model: string;
  messages: Message[];
  /** Params after normalisation; unknown members pass through to the provider. */
  params: Record<string, unknown>;
}

export interface TextInput {
  model: string;
  prompt: string | string[];
  params: Record<string, unknown>;
}

export interface EmbeddingsInput {
  model: string;
  input: string | string[];
  params: Record<string, unknown>;
}

/** A normalised non-streaming answer; the router adds `object`, `extra_fields` and the rest. */
export interface AdapterResult<Choice = ChatChoice | TextChoice> {
  id: string;
  created: number;
  model: string;
  choices: Choice[];
  usage: Usage;
  systemFingerprint?: string | null;
  /** The provider's own body, for `extra_fields.raw_response`. */
  raw: unknown;
}

export interface EmbeddingsResult {
  model: string;
  data: Array<{ index: number; embedding: number[] }>;
  usage: Usage;
  raw: unknown;
}

/**
 * A provider adapter: the translation between gw's OpenAI-shaped normalised requests and one provider's
 * wire format. The router owns keys, retries, fallbacks and timeouts; adapters only translate and send.
 * Operations an adapter lacks are absent here and from `capabilities.operations`.
 */
export interface ProviderAdapter {
  readonly capabilities: Capabilities;
  chat?(input: ChatInput, context: AdapterContext): Promise<AdapterResult<ChatChoice>>;
  chatStream?(input: ChatInput, context: AdapterContext): AsyncIterable<ChatCompletionChunk>;
  text?(input: TextInput, context: AdapterContext): Promise<AdapterResult<TextChoice>>;
  textStream?(input: TextInput, context: AdapterContext): AsyncIterable<ChatCompletionChunk>;
  embeddings?(input: EmbeddingsInput, context: AdapterContext): Promise<EmbeddingsResult>;
}
