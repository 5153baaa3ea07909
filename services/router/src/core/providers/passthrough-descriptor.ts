import type { PassthroughOperation } from '@gw/shared';
import type { ResolvedKey } from './adapter.ts';

/** How one provider is spoken to in pass-through: what it offers, where, and how gw's key is presented. */
export interface PassthroughDescriptor {
  operations: readonly PassthroughOperation[];
  /** The upstream URL of a call (the provider's base URL may carry a path prefix). */
  url(call: {
    baseUrl: string;
    path: string;
    operation: PassthroughOperation;
    key: ResolvedKey | undefined;
  }): URL;
  /** The headers that carry gw's provider key (they win over anything the caller sent). */
  auth(key: ResolvedKey | undefined): Record<string, string>;
  /** Headers the provider needs, unless the caller sent its own (Anthropic's API version). */
  defaults?: Record<string, string>;
}

export function joinUrl(baseUrl: string, path: string): URL {
  return new URL(baseUrl.replace(/\/+$/, '') + path);
}

export const bearerAuth = (key: ResolvedKey | undefined): Record<string, string> =>
  key?.value ? { authorization: `Bearer ${key.value}` } : {};

/** OpenAI's API layout: `/v1/<path>`; its count of input tokens lives under the Responses API. */
export function openAiPath(path: string, operation: PassthroughOperation): string {
  if (operation === 'count_tokens') return `/v1/responses/input_tokens${path.slice('/count-tokens'.length)}`;
  return `/v1${path}`;
}

/** The descriptor of a provider that speaks OpenAI's API layout with a bearer key. */
export function openAiStylePassthrough(operations: readonly PassthroughOperation[]): PassthroughDescriptor {
  return {
    operations,
    url: ({ baseUrl, path, operation }) => joinUrl(baseUrl, openAiPath(path, operation)),
    auth: bearerAuth,
  };
}
