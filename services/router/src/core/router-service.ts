import type { Message, Usage } from '@gw/shared';
import type { ProviderHealth } from './health.ts';
import type { PassthroughRequest, PassthroughResponse } from './passthrough.ts';

export type { PassthroughOperation, PassthroughRequest, PassthroughResponse } from './passthrough.ts';

/** One place a request may be served: a provider, its model, and the provider keys it may use. */
export interface RouteTarget {
  provider: string;
  model: string;
  /** Provider key ids allowed by the virtual key; undefined or `*` means all. */
  keyIds?: string[] | undefined;
}

/** A completion (or embeddings) to execute along a plan: targets in order (the first, then fallbacks). */
export interface RouteRequest {
  requestId: string;
  operation: 'chat' | 'text' | 'embeddings';
  targets: RouteTarget[];
  messages?: Message[];
  prompt?: string | string[];
  /** The texts to embed (operation `embeddings`). */
  input?: string | string[];
  params: Record<string, unknown>;
}

export interface CompleteResult {
  /** The serialized CompletionResponse (embeddings: an OpenAI embeddings list), ready to be written. */
  body: string;
  provider: string;
  model: string;
  usage: Usage;
}

export interface StreamItem {
  /** One serialized chunk: the SSE data payload. */
  chunk: string;
  /** Set on the first item. */
  provider?: string;
  model?: string;
  /** Set on the item that carried usage (normally the last). */
  usage?: Usage;
}

export interface CallOptions {
  signal: AbortSignal;
}

/** The router's interface; implemented by the core, and by the gRPC client with the same meaning. */
export interface RouterService {
  complete(request: RouteRequest, options: CallOptions): Promise<CompleteResult>;
  stream(request: RouteRequest, options: CallOptions): AsyncIterable<StreamItem>;
  /**
   * A pass-through call (SPEC.md endpoint note 7): the body streams up as `body` yields, the answer streams
   * back; an upstream error is an ordinary answer (its status and body), not a thrown error.
   */
  passthrough(
    request: PassthroughRequest,
    body: AsyncIterable<Uint8Array> | undefined,
    options: CallOptions,
  ): Promise<PassthroughResponse>;
  listProviders(): Promise<Array<Record<string, unknown>>>;
  getProvider(name: string): Promise<Record<string, unknown>>;
  putProvider(name: string, config: unknown, options: { create: boolean }): Promise<Record<string, unknown>>;
  deleteProvider(name: string): Promise<void>;
  health(): Promise<ProviderHealth[]>;
}
