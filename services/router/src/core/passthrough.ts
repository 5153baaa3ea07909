import { Readable } from 'node:stream';
import { GatewayError, unsupportedOperation } from '@gw/shared';
import { selectKey } from './key-selector.ts';
import type { LoadedProvider } from './provider-registry.ts';
import type { ResolvedKey } from './providers/adapter.ts';
import { azureKeyConfigSchema } from './providers/azure/azure-config.ts';
import type { CallOptions, RouteTarget } from './router-service.ts';
import type { UpstreamClient } from './upstream-client.ts';

/**
 * The pass-through family of SPEC.md endpoint note 7: `/v1/<root>[/…]` forwarded to the provider's own API
 * with the gateway's provider key. `/v1/chat/completions` is not here: it is the governed, normalised path.
 */
export const PASSTHROUGH_ROUTES = [
  { root: '/models', operation: 'models' },
  { root: '/completions', operation: 'completions' },
  { root: '/responses', operation: 'responses' },
  { root: '/images/generations', operation: 'images_generations' },
  { root: '/images/edits', operation: 'images_edits' },
  { root: '/images/variations', operation: 'images_variations' },
  { root: '/embeddings', operation: 'embeddings' },
  { root: '/audio/speech', operation: 'audio_speech' },
  { root: '/audio/transcriptions', operation: 'audio_transcriptions' },
  { root: '/files', operation: 'files' },
  { root: '/batches', operation: 'batches' },
  { root: '/count-tokens', operation: 'count_tokens' },
  { root: '/videos', operation: 'videos' },
  { root: '/containers', operation: 'containers' },
] as const;

export type PassthroughOperation = (typeof PASSTHROUGH_ROUTES)[number]['operation'];

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

/** How one provider is spoken to in pass-through: what it offers, where, and how gw's key is presented. */
interface PassthroughSupport {
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

const ALL_OPERATIONS = PASSTHROUGH_ROUTES.map((route) => route.operation);

function join(baseUrl: string, path: string): URL {
  return new URL(baseUrl.replace(/\/+$/, '') + path);
}

const bearer = (key: ResolvedKey | undefined): Record<string, string> =>
  key?.value ? { authorization: `Bearer ${key.value}` } : {};

/** OpenAI's API layout: `/v1/<path>`; its count of input tokens lives under the Responses API. */
function openAiPath(path: string, operation: PassthroughOperation): string {
  if (operation === 'count_tokens') return `/v1/responses/input_tokens${path.slice('/count-tokens'.length)}`;
  return `/v1${path}`;
}

const openAiStyle = (operations: readonly PassthroughOperation[]): PassthroughSupport => ({
  operations,
  url: ({ baseUrl, path, operation }) => join(baseUrl, openAiPath(path, operation)),
  auth: bearer,
});

/**
 * Pass-through support per provider, as data: the router answers 400 `unsupported_operation` before any
 * upstream call for an operation a provider lacks. Providers not listed support none.
 */
export const PASSTHROUGH_SUPPORT: Readonly<Record<string, PassthroughSupport>> = {
  openai: openAiStyle(ALL_OPERATIONS),
  // Azure OpenAI's v1 API (`/openai/v1/…`) on the key's resource endpoint.
  azure: {
    operations: [
      'models',
      'completions',
      'responses',
      'embeddings',
      'images_generations',
      'images_edits',
      'audio_speech',
      'audio_transcriptions',
      'files',
      'batches',
    ],
    url: ({ baseUrl, path, operation, key }) => {
      const endpoint = azureKeyConfigSchema.safeParse(key?.config ?? {}).data?.endpoint;
      return join(endpoint ?? baseUrl, `/openai${openAiPath(path, operation)}`);
    },
    auth: (key) => {
      if (!key?.value) return {};
      const entra = azureKeyConfigSchema.safeParse(key.config).data?.auth === 'entra';
      return entra ? bearer(key) : { 'api-key': key.value };
    },
  },
  // The provider SPEC.md describes as supporting only models, completions, chat, responses, speech and
  // transcriptions (its default base URL already ends in `/openai`).
  groq: openAiStyle(['models', 'completions', 'responses', 'audio_speech', 'audio_transcriptions']),
  mistral: openAiStyle(['models', 'embeddings', 'files']),
  anthropic: {
    operations: ['models', 'count_tokens'],
    url: ({ baseUrl, path, operation }) =>
      join(
        baseUrl,
        operation === 'count_tokens'
          ? `/v1/messages/count_tokens${path.slice('/count-tokens'.length)}`
          : `/v1${path}`,
      ),
    auth: (key): Record<string, string> => (key?.value ? { 'x-api-key': key.value } : {}),
    defaults: { 'anthropic-version': '2023-06-01' },
  },
  gemini: {
    operations: ['models'],
    url: ({ baseUrl, path }) => join(baseUrl, `/v1beta${path}`),
    auth: (key): Record<string, string> => (key?.value ? { 'x-goog-api-key': key.value } : {}),
  },
};

/** The support of a provider: its own entry, or (custom providers) that of the wire format it is built on. */
export function passthroughSupportOf(provider: LoadedProvider): PassthroughSupport | undefined {
  return (
    PASSTHROUGH_SUPPORT[provider.name] ??
    (provider.config.custom_provider_config
      ? PASSTHROUGH_SUPPORT[provider.config.custom_provider_config.base_provider]
      : undefined)
  );
}

/** Headers that describe one connection, never forwarded (RFC 9110 §7.6.1), in either direction. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
]);

function answerHeaders(
  headers: Record<string, string | string[] | undefined>,
): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || name.startsWith(':')) continue;
    kept[name] = value;
  }
  return kept;
}

const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE']);

/**
 * One pass-through call: support check, key selection, then the upstream call with the body streamed in and
 * the answer streamed out (nothing held whole). No retries: a streamed body cannot be sent twice.
 */
export async function runPassthrough(options: {
  provider: LoadedProvider;
  request: PassthroughRequest;
  body: AsyncIterable<Uint8Array> | undefined;
  http: UpstreamClient;
  call: CallOptions;
  random?: (() => number) | undefined;
}): Promise<PassthroughResponse> {
  const { provider, request } = options;
  const support = passthroughSupportOf(provider);
  if (!support?.operations.includes(request.operation)) {
    throw unsupportedOperation(provider.name, request.operation);
  }
  if (!METHODS.has(request.method)) {
    throw new GatewayError({
      type: 'method_not_allowed',
      message: `${request.method} is not forwarded`,
    });
  }
  const key = selectKey(
    provider.keys,
    { model: request.target.model, allowedIds: request.target.keyIds, excluded: new Set() },
    options.random,
  );
  if (!key && !provider.adapter.capabilities.authOptional) {
    throw new GatewayError({
      type: 'provider_not_configured',
      message: `provider '${provider.name}' has no key that may serve this call`,
      provider: provider.name,
    });
  }
  const network = provider.config.network_config;
  const url = support.url({
    baseUrl: provider.baseUrl,
    path: request.path,
    operation: request.operation,
    key,
  });
  const response = await options.http.request({
    url,
    method: request.method as 'GET' | 'POST' | 'PUT' | 'DELETE',
    headers: { ...support.defaults, ...network.extra_headers, ...request.headers, ...support.auth(key) },
    body: request.hasBody && options.body ? Readable.from(options.body, { objectMode: false }) : undefined,
    signal: options.call.signal,
    timeoutMs: network.model_timeouts_ms[request.target.model] ?? network.timeout_ms,
  });
  return {
    status: response.statusCode,
    headers: answerHeaders(response.headers),
    body: response.body,
  };
}
