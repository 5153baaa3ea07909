import type {
  ChatChoice,
  ChatCompletionChunk,
  Message,
  NetworkConfig,
  Operation,
  TextChoice,
  Usage,
} from '@gw/shared';
import type { TraceContext } from '@gw/shared/tracing';
import type { NativeFormat, NativeRequest } from '../router-service.ts';
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

/**
 * What a provider offers unless its adapter says otherwise: tools and vision, a key on every call, a default
 * base URL. `textViaChat` is set by `withTextViaChat`, which adds the text operations.
 */
export const DEFAULT_CAPABILITIES: Omit<Capabilities, 'operations'> = {
  tools: true,
  vision: true,
  textViaChat: false,
  authOptional: false,
  requiresBaseUrl: false,
};

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
  /**
   * Where `env.NAME` references of key configs and a provider's own settings (Bedrock's AWS_REGION) are read:
   * the process's environment, handed down from the composition root.
   */
  environment: NodeJS.ProcessEnv;
  /** The attempt's span: sent upstream as `traceparent` (and `tracestate`) when tracing is on. */
  trace?: TraceContext | undefined;
}

export interface ChatInput {
  model: string;
  messages: Message[];
  /** Params after normalisation; unknown members pass through to the provider. */
  params: Record<string, unknown>;
}

/** A chat request in the caller's own format, for a provider that takes it verbatim (router-service.ts). */
export interface NativeChatInput {
  model: string;
  native: NativeRequest;
}

/**
 * One upstream event relayed verbatim, with its chat translation (no choices when it has none). A class, so
 * a stream tells it from a chunk by construction: a chunk parsed from an upstream may carry any member.
 */
export class NativePiece {
  readonly chunk: ChatCompletionChunk;
  readonly native: string;

  constructor(chunk: ChatCompletionChunk, native: string) {
    this.chunk = chunk;
    this.native = native;
  }
}

/**
 * A chunk that is the upstream's event as it came, parsed (an OpenAI-format event that gw's translation leaves
 * exactly as it is), with the event's JSON text: a surface of that format writes the text as it came
 * (StreamItem.json), so the stream reaches the caller byte for byte and is not serialised again. A class, as
 * NativePiece.
 */
export class VerbatimChunk {
  readonly chunk: ChatCompletionChunk;
  readonly json: string;

  constructor(chunk: ChatCompletionChunk, json: string) {
    this.chunk = chunk;
    this.json = json;
  }
}

/** What a chat or text stream of an adapter gives: chunks, some of them with their upstream's text. */
export type StreamPiece = ChatCompletionChunk | VerbatimChunk;

/** The chunk of a stream's piece. */
export function chunkOf(piece: StreamPiece): ChatCompletionChunk {
  return piece instanceof VerbatimChunk ? piece.chunk : piece;
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
  chatStream?(input: ChatInput, context: AdapterContext): AsyncIterable<StreamPiece>;
  text?(input: TextInput, context: AdapterContext): Promise<AdapterResult<TextChoice>>;
  textStream?(input: TextInput, context: AdapterContext): AsyncIterable<StreamPiece>;
  embeddings?(input: EmbeddingsInput, context: AdapterContext): Promise<EmbeddingsResult>;
  /** The format this provider takes verbatim for a model, if any: then the two methods below serve chat. */
  nativeFormat?(model: string): NativeFormat | undefined;
  /** A whole chat answer to a native request; `raw` is the provider's answer in that format. */
  nativeChat?(input: NativeChatInput, context: AdapterContext): Promise<AdapterResult<ChatChoice>>;
  nativeChatStream?(input: NativeChatInput, context: AdapterContext): AsyncIterable<NativePiece>;
}
