import type {
  ChatCompletionChunk,
  CompletionResponse,
  EmbeddingsList,
  Message,
  PassthroughOperation,
  TargetAttempt,
} from '@gw/shared';
import type { ProviderHealthReport } from '@gw/shared/health';
import type { TraceContext } from '@gw/shared/tracing';

/** One place a request may be served: a provider, its model, and the provider keys it may use. */
export interface RouteTarget {
  provider: string;
  model: string;
  /** Provider key ids allowed by the virtual key; undefined or `*` means all. */
  keyIds?: string[] | undefined;
  /** cache_affinity: a hash of the conversation's prefix; the provider key is chosen by it (key-selector.ts). */
  affinity?: string | undefined;
}

interface RouteBase {
  requestId: string;
  /** Targets in order: the first, then fallbacks. */
  targets: RouteTarget[];
  params: Record<string, unknown>;
}

/** Wire formats a caller may speak that some providers take verbatim (docs/surfaces.md "Same-format"). */
export type NativeFormat = 'anthropic' | 'openai-responses' | 'gemini' | 'converse';

/**
 * The caller's own request, for a provider that speaks its format: sent as it came with only the model and
 * auth changed, so nothing is lost in translation (thinking signatures, cache markers, fields gw does not
 * know). `messages` and `params` stay the translation, for every other provider.
 */
export interface NativeRequest {
  format: NativeFormat;
  body: Record<string, unknown>;
  /** The caller's headers that belong to the format (`anthropic-beta`; OpenAI's `openai-beta`). */
  headers: Record<string, string>;
  /**
   * Why the translation is not the caller's request (a block no other format can carry): a provider that
   * needs the translation refuses the call with this as a 400 instead of silently dropping it.
   */
  untranslatable?: { message: string; param: string } | undefined;
}

export interface ChatRoute extends RouteBase {
  operation: 'chat';
  messages: Message[];
  native?: NativeRequest | undefined;
}

export interface TextRoute extends RouteBase {
  operation: 'text';
  prompt: string | string[];
}

export interface EmbeddingsRoute extends RouteBase {
  operation: 'embeddings';
  /** The texts to embed. */
  input: string | string[];
}

/** A completion to execute along a plan. */
export type CompletionRoute = ChatRoute | TextRoute;
export type RouteRequest = CompletionRoute | EmbeddingsRoute;

/** Which target of the plan served and with which key (request logs' `fallback_index`, `selected_key_id`). */
export interface ServedBy {
  /** The target's place in the request's plan: 0 the first, 1 its first fallback… */
  fallbackIndex: number;
  /** The provider key's id; absent for a provider that needs none. */
  keyId?: string | undefined;
  /** The targets that failed before this one, each with its error (the request log's `attempts`). */
  failedBefore?: TargetAttempt[] | undefined;
}

/** A finished call: the domain answer and the provider that served it. */
export interface Served<Response> {
  response: Response;
  provider: string;
  servedBy?: ServedBy | undefined;
  /**
   * `response` as JSON text when a transport already holds it (saves one serialization on the way out).
   * Whoever changes `response` drops it.
   */
  json?: string | undefined;
}

export interface CompletionResult extends Served<CompletionResponse> {
  /** The provider's own answer to `route.native`, in the caller's format, when a provider took it verbatim. */
  native?: unknown;
}
export type EmbeddingsResult = Served<EmbeddingsList>;

/** One chunk of a stream. Model and usage are the chunk's own (`chunk.model`, `chunk.usage`). */
export interface StreamItem {
  chunk: ChatCompletionChunk;
  /** The provider that serves the stream; set on the first item. */
  provider?: string | undefined;
  /** Which target and key serve the stream; on the first item. */
  servedBy?: ServedBy | undefined;
  /** `chunk` as JSON text when a transport already holds it; whoever changes `chunk` drops it. */
  json?: string | undefined;
  /**
   * The upstream's event, framed as it came (`event: …\ndata: …\n\n`; Converse's binary frames as JSON lines
   * of their event type and payload, one per frame), on every item of a stream that answers `route.native`:
   * the caller's surface relays it verbatim. `chunk` is its translation (no choices when the
   * event carries nothing chat can say), for usage and the stages.
   */
  native?: string | undefined;
}

/** A pass-through call as ingress hands it over (the body travels beside it, as a stream). */
export interface PassthroughRequest {
  requestId: string;
  operation: PassthroughOperation;
  /** The provider, the model (empty when the call names none) and the provider keys the virtual key allows. */
  target: RouteTarget;
  method: string;
  /** The path below gw's `/v1` (`/files/file-abc/content`), with the query string when there is one. */
  path: string;
  /** Headers to forward, lowercase; the caller's credentials and hop-by-hop headers are already removed. */
  headers: Record<string, string>;
  /** True when a request body follows. */
  hasBody: boolean;
}

/** The provider's answer, status and headers as sent (hop-by-hop removed), the body as it streams in. */
export interface PassthroughResponse {
  status: number;
  headers: Record<string, string | string[]>;
  body: AsyncIterable<Uint8Array>;
}

export interface CallOptions {
  signal: AbortSignal;
  /** The caller's trace context, when it traces: the router's spans are its children (docs/tracing.md). */
  trace?: TraceContext | undefined;
}

/** The router's interface; implemented by the core, and by the gRPC client with the same meaning. */
/** How a provider write was authorized: whether it may name `env.` or secret-manager references. */
export interface ProviderWriteOptions {
  /** The caller holds `secrets:reference` (Admin); otherwise a new reference is a 400 (secret-policy.ts). */
  allowSecretReferences?: boolean | undefined;
}

export interface RouterService {
  complete(request: CompletionRoute, options: CallOptions): Promise<CompletionResult>;
  stream(request: CompletionRoute, options: CallOptions): AsyncIterable<StreamItem>;
  embed(request: EmbeddingsRoute, options: CallOptions): Promise<EmbeddingsResult>;
  /**
   * A pass-through call (docs/surfaces.md): the body streams up as `body` yields, the answer streams
   * back; an upstream error is an ordinary answer (its status and body), not a thrown error.
   */
  passthrough(
    request: PassthroughRequest,
    body: AsyncIterable<Uint8Array> | undefined,
    options: CallOptions,
  ): Promise<PassthroughResponse>;
  listProviders(): Promise<Array<Record<string, unknown>>>;
  getProvider(name: string): Promise<Record<string, unknown>>;
  putProvider(
    name: string,
    config: unknown,
    options: ProviderWriteOptions & { create: boolean },
  ): Promise<Record<string, unknown>>;
  /** A JSON merge patch of a provider's config, keys merged by id (`provider-patch.ts`); secrets are kept. */
  patchProvider(
    name: string,
    patch: Record<string, unknown>,
    options?: ProviderWriteOptions,
  ): Promise<Record<string, unknown>>;
  deleteProvider(name: string): Promise<void>;
  /** Health of every provider with its keys and models (docs/routing-health.md). */
  health(): Promise<ProviderHealthReport[]>;
}
