// `@gw/cache`: the semantic cache's keys, entries and in-process backend. The Redis backend has its own entry
// point (`@gw/cache/redis`), so embedded mode never loads ioredis for it. README.md shows how a pipeline stage
// calls it.
export { answerAsChunks, answerAsResponse, chunksToResponse, responseToChunks } from './answer-conversion.ts';
/**
 * @public The types of the API the request pipeline's cache stage is written against (its caller lands with
 * the stage, not in this package).
 */
export type { CacheBackend, CacheBackendOptions, NearestQuery } from './cache-backend.ts';
/** @public */
export type { CachedAnswer } from './cache-entry.ts';
export {
  type CacheEntry,
  checkStorable,
  decodeEntry,
  encodeEntry,
  isStorable,
  MAX_STORED_CHUNKS,
} from './cache-entry.ts';
/** @public */
export type { CacheRequestOptions } from './cache-headers.ts';
export {
  CACHE_REQUEST_HEADERS,
  CACHE_RESPONSE_HEADERS,
  cacheResultHeaders,
  parseCacheHeaders,
} from './cache-headers.ts';
/** @public */
export type { CacheKeyInput, CacheKeyOptions, CacheKeys, SemanticEligibility } from './cache-key.ts';
export {
  cacheKeys,
  callerKeyHash,
  canonicalJson,
  contextHash,
  exactHash,
  semanticEligibility,
} from './cache-key.ts';
export { MemoryCacheBackend } from './memory-cache-backend.ts';
/** @public */
export type {
  CacheHit,
  CacheHitType,
  CacheStats,
  LookupRequest,
  SemanticCacheOptions,
  StoreOutcome,
  StoreRequest,
} from './semantic-cache.ts';
export { SemanticCache } from './semantic-cache.ts';
