import {
  type CachedAnswer,
  type CacheHit,
  type CacheHitType,
  type CacheKeyInput,
  type CacheKeyOptions,
  type CacheRequestOptions,
  cacheResultHeaders,
  contextHash,
  exactHash,
  parseCacheHeaders,
  type SemanticCache,
  semanticEligibility,
} from '@gw/cache';
import type { AuthorizeResult } from '@gw/governance';
import type { CompletionRoute, RouterService } from '@gw/router';
import { type CacheConfig, invalidRequest, type Live, type Logger, type Metrics } from '@gw/shared';
import {
  type CacheReport,
  collectingStream,
  hitAsResult,
  hitAsStream,
  storableResponse,
  withReport,
} from './cache-replay.ts';
import type { CompletionExchange, Stage } from './stage.ts';

export interface CacheStageOptions {
  cache: SemanticCache;
  /** The `cache` settings (enabled at start), followed live: each request reads the ones in force. */
  config: Live<CacheConfig>;
  /** Embeds conversations for semantic matches, through the router like any call. */
  router: Pick<RouterService, 'embed'>;
  metrics: Metrics;
  logger: Logger;
}

/** What one request's lookup found, and what storing its answer needs. */
interface Lookup {
  scope: string;
  /** The exact hash (cache-key.ts). */
  hash: string;
  options: CacheRequestOptions;
  /**
   * The conversation's embedding and context hash, when a semantic lookup made them: the stored entry is then
   * found semantically too. A request without one never computes the context (half of the keys' cost).
   */
  semantic?: { vector: number[]; context: string } | undefined;
  hit?: CacheHit | undefined;
  startedAt: number;
}

const MISS: CacheReport = { status: 'miss' };

/**
 * The scope entries are kept in: the virtual key's (`vk:<id>`; requests without a key share `anonymous`), or
 * `global` when the config shares one scope. An entry is never served outside its scope.
 */
export function cacheScope(authorization: AuthorizeResult, scopeByVirtualKey: boolean): string {
  if (!scopeByVirtualKey) return 'global';
  return authorization.virtualKeyId === undefined ? 'anonymous' : `vk:${authorization.virtualKeyId}`;
}

/**
 * What decides the answer besides messages and params: a request the provider takes in its own format
 * (route.native) may hold what the translation does not, so its body is in the key too (`stream` aside, so a
 * streamed request still finds a whole answer).
 */
function keyParams(route: CompletionRoute): Readonly<Record<string, unknown>> {
  if (route.operation !== 'chat' || !route.native) return route.params;
  const { stream: _stream, ...body } = route.native.body;
  return { ...route.params, native_body: body };
}

/**
 * The response cache (docs/cache.md), a stage inside `settle` so a hit is still recorded and
 * settled. Before the router: the exact hash, then (when eligible) the nearest conversation by its embedding;
 * a hit answers without calling `next`, in the shape asked (a stored whole answer as a stream and the other
 * way round). After a miss: the complete answer is stored once it is out, never on the request's path.
 */
/** What the stage reads of the `cache` settings, worked out once per version of them. */
function stageSettings(config: CacheConfig) {
  const { embedding } = config;
  return {
    config,
    types: config.types as readonly CacheHitType[],
    embedding,
    embeddingProvider: embedding?.model.slice(0, embedding.model.indexOf('/')),
    embeddingModel: embedding?.model.slice(embedding.model.indexOf('/') + 1),
    // Vectors of another model, or of the same model at other dimensions, live in another space: part of the
    // context hash, so they are never compared.
    embeddingSpace:
      embedding &&
      `${embedding.model}${embedding.dimensions === undefined ? '' : `@${embedding.dimensions}`}`,
  };
}

export function cacheStage(options: CacheStageOptions): Stage {
  const { cache, router, metrics, logger } = options;
  let settings = stageSettings(options.config.current());
  /** The settings in force (a change made through `PUT /api/config` applies to the next lookup). */
  const current = () => {
    const config = options.config.current();
    if (config !== settings.config) settings = stageSettings(config);
    return settings;
  };

  function wantedTypes(
    requestOptions: CacheRequestOptions,
    types: readonly CacheHitType[],
  ): readonly CacheHitType[] {
    if (requestOptions.types === undefined) return types;
    const wanted = requestOptions.types.filter((type) => types.includes(type));
    if (wanted.length === 0) {
      throw invalidRequest(
        `x-gw-cache-type: ${requestOptions.types.join(', ')} matching is not enabled on this gateway (cache.types)`,
        'x-gw-cache-type',
      );
    }
    return wanted;
  }

  /** The embedding of a conversation, charged to the request as a side call; undefined when it failed. */
  async function embed(exchange: CompletionExchange, text: string): Promise<number[] | undefined> {
    const { embedding, embeddingProvider, embeddingModel } = current();
    if (embeddingProvider === undefined || embeddingModel === undefined) return undefined;
    // The virtual key's provider keys for that provider when its plan names it; the gateway's otherwise.
    const planned = exchange.authorization.targets.find((target) => target.provider === embeddingProvider);
    try {
      const result = await router.embed(
        {
          requestId: exchange.requestId,
          operation: 'embeddings',
          targets: [{ provider: embeddingProvider, model: embeddingModel, keyIds: planned?.keyIds }],
          params: embedding?.dimensions === undefined ? {} : { dimensions: embedding.dimensions },
          input: text,
        },
        { signal: exchange.signal },
      );
      const { usage, model } = result.response;
      const sideCall = {
        provider: result.provider,
        model: model || embeddingModel,
        usage: { prompt_tokens: usage.prompt_tokens, completion_tokens: 0, total_tokens: usage.total_tokens },
      };
      exchange.sideCalls = [...(exchange.sideCalls ?? []), sideCall];
      metrics.tokens.inc({ provider: result.provider, kind: 'prompt' }, usage.prompt_tokens);
      const vector = result.response.data[0]?.embedding;
      if (!Array.isArray(vector) || vector.length === 0)
        throw new Error('the embeddings answer holds no vector');
      return vector;
    } catch (error) {
      // A caller that went away ends the request; any other failure only costs the semantic match.
      if (exchange.signal.aborted) throw error;
      metrics.cacheLookups.inc({ result: 'error', type: 'semantic' });
      logger.warn(
        { err: error, requestId: exchange.requestId },
        'cache: the embedding failed; no semantic match',
      );
      return undefined;
    }
  }

  async function timedLookup(type: CacheHitType, request: Parameters<SemanticCache['lookup']>[0]) {
    const started = performance.now();
    const hit = await cache.lookup({ ...request, types: [type] });
    metrics.cacheLookupDuration.observe({ type }, (performance.now() - started) / 1000);
    metrics.cacheLookups.inc({ result: hit ? 'hit' : 'miss', type });
    return hit;
  }

  /**
   * A caller without a virtual key shares its scope with every other such caller: it is only cached when the
   * config says so, and then it cannot choose what an entry answers (no key of its own, no semantic neighbour
   * it could craft) nor keep it longer than the default.
   */
  function anonymousOptions(requestOptions: CacheRequestOptions, config: CacheConfig): CacheRequestOptions {
    if (requestOptions.callerKey !== undefined) {
      throw invalidRequest(
        'x-gw-cache-key: a request without a virtual key may not name its cache key',
        'x-gw-cache-key',
      );
    }
    const { ttlMs } = requestOptions;
    return {
      ...requestOptions,
      ...(ttlMs !== undefined && { ttlMs: Math.min(ttlMs, config.ttl_ms) }),
      types: ['exact'],
    };
  }

  async function lookUp(exchange: CompletionExchange): Promise<Lookup | undefined> {
    const startedAt = performance.now();
    const { config, types, embeddingSpace } = current();
    const anonymous = exchange.authorization.virtualKeyId === undefined;
    if (anonymous && !(config.anonymous && types.includes('exact'))) return undefined;
    const headerOptions = parseCacheHeaders(exchange.headers);
    const requestOptions = anonymous ? anonymousOptions(headerOptions, config) : headerOptions;
    const wanted = wantedTypes(requestOptions, types);
    const { route } = exchange;
    const target = route.targets[0];
    if (!target) return undefined;
    const keyInput: CacheKeyInput = {
      provider: target.provider,
      model: target.model,
      messages: route.operation === 'chat' ? route.messages : undefined,
      prompt: route.operation === 'text' ? route.prompt : undefined,
      params: keyParams(route),
    };
    const keyOptions: CacheKeyOptions = {
      ignoreModel: config.ignore_model,
      embeddingModel: embeddingSpace,
      callerKey: requestOptions.callerKey,
    };
    const lookup: Lookup = {
      scope: cacheScope(exchange.authorization, config.scope_by_virtual_key),
      hash: exactHash(keyInput, keyOptions),
      // The TTL of what is stored: the request's, else the settings' (as they are when it was looked up).
      options: { ...requestOptions, ttlMs: requestOptions.ttlMs ?? config.ttl_ms },
      startedAt,
    };
    // Exact first: an exact hit never pays for an embedding.
    if (wanted.includes('exact')) {
      lookup.hit = await timedLookup('exact', { scope: lookup.scope, hash: lookup.hash });
      if (lookup.hit) return lookup;
    }
    if (!wanted.includes('semantic') || route.operation !== 'chat') return lookup;
    const eligibility = semanticEligibility(route.messages, {
      maxTurns: config.max_turns,
      allowToolResults: config.include_tool_results,
    });
    if (!eligibility.eligible) return lookup;
    const vector = await embed(exchange, eligibility.text);
    if (vector === undefined) return lookup;
    lookup.semantic = { vector, context: contextHash(keyInput, keyOptions) };
    lookup.hit = await timedLookup('semantic', {
      scope: lookup.scope,
      hash: lookup.hash,
      ...lookup.semantic,
      threshold: requestOptions.threshold ?? config.threshold,
    });
    return lookup;
  }

  function announce(exchange: CompletionExchange, hit: CacheHit | undefined): void {
    if (exchange.log) exchange.log.cache = hit ? 'hit' : 'miss';
    const headers = exchange.answerHeaders;
    if (!headers || headers.headersSent) return;
    for (const [name, value] of Object.entries(cacheResultHeaders(hit))) headers.setHeader(name, value);
  }

  /** Stores a miss's answer after it is out (setImmediate: the answer is written first), never awaited. */
  function storeLater(
    lookup: Lookup,
    answer: () => CachedAnswer,
    served: { provider: string; model: string },
  ) {
    if (lookup.options.noStore) {
      metrics.cacheStores.inc({ outcome: 'skipped' });
      return;
    }
    setImmediate(() => {
      void cache
        .store({
          scope: lookup.scope,
          hash: lookup.hash,
          context: lookup.semantic?.context,
          vector: lookup.semantic?.vector,
          provider: served.provider,
          model: served.model,
          answer: answer(),
          ttlMs: lookup.options.ttlMs,
        })
        .then((outcome) => {
          const result = outcome.stored ? 'stored' : outcome.reason === 'not_storable' ? 'refused' : 'error';
          metrics.cacheStores.inc({ outcome: result });
        });
    });
  }

  /** A request the cache does not look at (no-cache, a request it cannot answer): so recorded. */
  function bypass<Result>(exchange: CompletionExchange, next: () => Promise<Result>): Promise<Result> {
    if (exchange.log) exchange.log.cache = 'bypass';
    return next();
  }

  return {
    name: 'cache',

    async complete(exchange, next) {
      const lookup = await lookUp(exchange);
      if (!lookup) return bypass(exchange, next);
      announce(exchange, lookup.hit);
      if (lookup.hit) return hitAsResult(lookup.hit, (performance.now() - lookup.startedAt) / 1000);
      const result = await next();
      const { response } = result;
      storeLater(lookup, () => ({ kind: 'whole', response: storableResponse(response) }), {
        provider: result.provider,
        model: response.model,
      });
      return withReport(result, MISS);
    },

    async stream(exchange, next) {
      const lookup = await lookUp(exchange);
      if (!lookup) return bypass(exchange, next);
      announce(exchange, lookup.hit);
      if (lookup.hit) return hitAsStream(lookup.hit);
      const items = await next();
      return collectingStream(items, {
        report: MISS,
        complete: (chunks, provider) =>
          storeLater(lookup, () => ({ kind: 'chunks', chunks }), { provider, model: chunks[0]?.model ?? '' }),
      });
    },
  };
}
