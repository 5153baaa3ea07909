import { Readable } from 'node:stream';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import {
  type BuiltInProvider,
  GatewayError,
  PASSTHROUGH_ROUTES,
  redactText,
  requestTargetProblem,
  unsupportedOperation,
} from '@gw/shared';
import type { HealthBoard } from '@gw/shared/health';
import { traceHeaders } from '@gw/shared/tracing';
import { healthOutcome, statusOutcome } from './health-outcome.ts';
import { selectKey } from './key-selector.ts';
import type { LoadedProvider } from './provider-registry.ts';
import type { PassthroughDescriptor } from './providers/passthrough-descriptor.ts';
import { BUILT_IN_PROVIDERS } from './providers/registry.ts';
import type { CallOptions, PassthroughRequest, PassthroughResponse } from './router-service.ts';
import { readBounded, type UpstreamClient } from './upstream-client.ts';

/** The descriptor of a provider: its own, or (custom providers) that of the wire format it is built on. */
function descriptorOf(provider: LoadedProvider): PassthroughDescriptor | undefined {
  const name = provider.config.custom_provider_config?.base_provider ?? provider.name;
  return BUILT_IN_PROVIDERS[name as BuiltInProvider]?.passthrough;
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

/** The answer's headers as relayed: hop-by-hop ones dropped, the provider's credentials taken out of values. */
function answerHeaders(
  headers: Record<string, string | string[] | undefined>,
  secrets: readonly string[],
): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || name.startsWith(':')) continue;
    kept[name] = Array.isArray(value)
      ? value.map((item) => redactText(item, secrets))
      : redactText(value, secrets);
  }
  return kept;
}

const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE']);

const ROOTS = new Map<string, string>(PASSTHROUGH_ROUTES.map(({ operation, root }) => [operation, root]));

/**
 * The router does not trust its caller's path: it must lie under its operation's documented root and be a
 * plain path (no dot segment, encoded slash or `//`, checked as every HTTP port checks it), so a forged or
 * buggy pass-through request cannot reach another API of the provider with gw's key.
 */
function assertDocumentedPath(request: PassthroughRequest): void {
  const root = ROOTS.get(request.operation);
  const path = request.path;
  const under =
    root !== undefined &&
    path.startsWith(root) &&
    (path.length === root.length || path[root.length] === '/' || path[root.length] === '?');
  const problem = under
    ? requestTargetProblem(request.method, path, { strict: true })
    : `it is not under ${root ?? 'a pass-through root'}`;
  if (problem) {
    throw new GatewayError({
      type: 'invalid_request',
      message: `pass-through path ${JSON.stringify(path.slice(0, 200))} is refused: ${problem}`,
    });
  }
}

/**
 * One pass-through call: support check, key selection (by health, like every attempt), then the upstream call
 * with the body streamed in and the answer streamed out (nothing held whole); its outcome counts against the
 * key's health for the model it names. No retries: a streamed body cannot be sent twice.
 */
export async function runPassthrough(options: {
  provider: LoadedProvider;
  request: PassthroughRequest;
  body: AsyncIterable<Uint8Array> | undefined;
  http: UpstreamClient;
  call: CallOptions;
  health: HealthBoard;
  random?: (() => number) | undefined;
}): Promise<PassthroughResponse> {
  const { provider, request } = options;
  assertDocumentedPath(request);
  const support = descriptorOf(provider);
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
    {
      model: request.target.model,
      allowedIds: request.target.keyIds,
      excluded: new Set(),
      affinity: request.target.affinity,
    },
    { provider: provider.name, health: options.health, random: options.random },
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
  const measured = { provider: provider.name, key: key?.id, model: request.target.model };
  const startedAt = performance.now();
  const response = await options.http
    .request({
      url,
      method: request.method as 'GET' | 'POST' | 'PUT' | 'DELETE',
      headers: {
        ...support.defaults,
        ...network.extra_headers,
        ...request.headers,
        // The router's span is the upstream's parent (a caller's own traceparent is not relayed past gw's).
        ...(options.call.trace && traceHeaders(options.call.trace)),
        ...support.auth(key),
      },
      body: request.hasBody && options.body ? Readable.from(options.body, { objectMode: false }) : undefined,
      signal: options.call.signal,
      timeoutMs: network.model_timeouts_ms[request.target.model] ?? network.timeout_ms,
    })
    .catch((error: unknown) => {
      const outcome = error instanceof GatewayError ? healthOutcome(error) : undefined;
      if (outcome) options.health.record(measured, outcome);
      throw error;
    });
  const outcome = statusOutcome(response.statusCode, performance.now() - startedAt);
  if (outcome) options.health.record(measured, outcome);
  const headers = answerHeaders(response.headers, provider.secrets);
  if (response.statusCode < 400) return { status: response.statusCode, headers, body: response.body };
  // Upstreams echo what they were sent: an error answer is read (bounded), decoded and relayed without the
  // provider's credentials or anything shaped like a key.
  const body = await withoutSecrets(response.body, headers, provider.secrets);
  delete headers['content-encoding'];
  headers['content-length'] = String(body.length);
  return { status: response.statusCode, headers, body: Readable.from([body]) };
}

/** Most bytes of a pass-through error answer gw reads, decoded, to check it for credentials. */
const ERROR_ANSWER_LIMIT = 64 * 1024;

const DECODERS: Record<string, (bytes: Buffer, options: { maxOutputLength: number }) => Buffer> = {
  gzip: gunzipSync,
  'x-gzip': gunzipSync,
  deflate: inflateSync,
  br: brotliDecompressSync,
};

/**
 * An error answer's body as it may be relayed: decoded when it came compressed, with every credential of the
 * provider and every key-shaped string taken out. One that cannot be decoded is withheld, named as such.
 */
async function withoutSecrets(
  body: AsyncIterable<Buffer> & { destroy(): void },
  headers: Record<string, string | string[]>,
  secrets: readonly string[],
): Promise<Buffer> {
  const raw = await readBounded(body, ERROR_ANSWER_LIMIT);
  const encoding = String(headers['content-encoding'] ?? 'identity').toLowerCase();
  let text: string;
  try {
    const decode = DECODERS[encoding];
    if (!decode && encoding !== 'identity') throw new Error(`unknown encoding ${encoding}`);
    text = (decode ? decode(raw, { maxOutputLength: 4 * ERROR_ANSWER_LIMIT }) : raw).toString('utf8');
  } catch {
    headers['content-type'] = 'application/json';
    return Buffer.from(
      JSON.stringify({
        error: { message: 'the provider answered an error gw could not decode; it was withheld' },
      }),
    );
  }
  return Buffer.from(redactText(text, secrets));
}
