import { randomUUID } from 'node:crypto';
import type { CacheBackend } from './cache-backend.ts';
import { type CacheEntry, cacheEntrySchema, checkStorable } from './cache-entry.ts';
import { normalise } from './vector-math.ts';

export type CacheHitType = 'exact' | 'semantic';

/** An entry's members but its answer (checked already): a scope, hash or context the backends cannot keep. */
const entryFieldsSchema = cacheEntrySchema.omit({ answer: true });

const DEFAULT_TTL_MS = 5 * 60_000;
const DEFAULT_THRESHOLD = 0.8;

export interface LookupRequest {
  /** The virtual key id (or a global scope): only entries of this scope are found. */
  scope: string;
  /** The exact hash (`cacheKeys(…).exact`). */
  hash: string;
  /** The context hash (`cacheKeys(…).context`); needed for a semantic match. */
  context?: string | undefined;
  /** The conversation's embedding; without it there is no semantic match. */
  vector?: ArrayLike<number> | undefined;
  /** Least cosine similarity of a semantic match, 0 to 1 (the request's override or the configured one). */
  threshold?: number | undefined;
  /** The kinds of match wanted; both by default. Exact is always tried first. */
  types?: readonly CacheHitType[] | undefined;
}

/** A hit: what the pipeline replays, and what it reports (hit type, similarity, entry id). */
export interface CacheHit {
  hit: CacheHitType;
  entry: CacheEntry;
  /** 1 for an exact hit. */
  similarity: number;
}

export interface StoreRequest {
  scope: string;
  hash: string;
  context?: string | undefined;
  /** The embedding the lookup used, so later requests can match this one semantically. */
  vector?: ArrayLike<number> | undefined;
  provider: string;
  model: string;
  /** `{ kind: 'whole', response }` or `{ kind: 'chunks', chunks }`; anything else is refused. */
  answer: unknown;
  /** The request's TTL; the configured default when absent. */
  ttlMs?: number | undefined;
}

export type StoreOutcome =
  | { stored: true; id: string }
  | { stored: false; reason: 'not_storable' | 'backend_error'; detail: string };

/** Counters since the cache was made. */
export interface CacheStats {
  exactHits: number;
  semanticHits: number;
  misses: number;
  /** Lookups that failed in the backend (answered as misses). */
  lookupErrors: number;
  stores: number;
  /** Answers refused as errors or partial. */
  refused: number;
  storeErrors: number;
}

export interface SemanticCacheOptions {
  backend: CacheBackend;
  /** Epoch ms; the backend's clock must be the same one. */
  now?: () => number;
  /** TTL of an entry whose request names none; 5 minutes by default. */
  defaultTtlMs?: number;
  /** Longest TTL a request may ask for (a day by default), so no header pins an entry for good. */
  maxTtlMs?: number;
  /** Semantic threshold of a lookup that names none; 0.8 by default. */
  defaultThreshold?: number;
  /** Told of backend failures, which never reach the request (a lookup then misses). */
  onError?: (error: unknown) => void;
}

/**
 * The cache a pipeline stage calls: `lookup` before the router, `store` after the answer (not awaited). It
 * fails open: a backend that is down makes lookups miss and stores fail quietly, counted and reported.
 */
export class SemanticCache {
  readonly backend: CacheBackend;
  private readonly now: () => number;
  private readonly defaultTtlMs: number;
  private readonly maxTtlMs: number;
  private readonly defaultThreshold: number;
  private readonly onError: (error: unknown) => void;
  private readonly counters: CacheStats = {
    exactHits: 0,
    semanticHits: 0,
    misses: 0,
    lookupErrors: 0,
    stores: 0,
    refused: 0,
    storeErrors: 0,
  };

  constructor(options: SemanticCacheOptions) {
    this.backend = options.backend;
    this.now = options.now ?? Date.now;
    this.defaultTtlMs = options.defaultTtlMs ?? DEFAULT_TTL_MS;
    this.maxTtlMs = options.maxTtlMs ?? 24 * 3_600_000;
    this.defaultThreshold = options.defaultThreshold ?? DEFAULT_THRESHOLD;
    this.onError = options.onError ?? (() => undefined);
  }

  /** The exact hit, else the nearest semantic one above the threshold, else undefined (a miss). */
  async lookup(request: LookupRequest): Promise<CacheHit | undefined> {
    const types = request.types ?? ['exact', 'semantic'];
    try {
      if (types.includes('exact')) {
        const entry = await this.backend.getByHash(request.scope, request.hash);
        if (entry !== undefined) {
          this.counters.exactHits++;
          return { hit: 'exact', entry, similarity: 1 };
        }
      }
      const wantsSemantic = types.includes('semantic') && request.context !== undefined;
      const vector = wantsSemantic && request.vector ? normalise(request.vector) : undefined;
      if (vector !== undefined && request.context !== undefined) {
        const found = await this.backend.nearest({
          scope: request.scope,
          context: request.context,
          vector,
          threshold: clampThreshold(request.threshold ?? this.defaultThreshold),
        });
        if (found !== undefined) {
          this.counters.semanticHits++;
          return { hit: 'semantic', entry: found.entry, similarity: found.similarity };
        }
      }
    } catch (error) {
      this.counters.lookupErrors++;
      this.onError(error);
    }
    this.counters.misses++;
    return undefined;
  }

  /**
   * Stores a complete answer; an error or a partial answer is refused. Never rejects: the caller does not
   * await it on the request's path, and a failure is counted and reported to `onError`.
   */
  async store(request: StoreRequest): Promise<StoreOutcome> {
    try {
      const verdict = checkStorable(request.answer);
      if (!verdict.storable) {
        this.counters.refused++;
        return { stored: false, reason: 'not_storable', detail: verdict.reason };
      }
      const createdAt = this.now();
      const asked =
        request.ttlMs !== undefined && Number.isFinite(request.ttlMs) ? request.ttlMs : this.defaultTtlMs;
      const ttlMs = Math.min(Math.max(asked, 1), this.maxTtlMs);
      const vector = request.vector && request.context !== undefined ? normalise(request.vector) : undefined;
      const entry: CacheEntry = {
        id: randomUUID(),
        scope: request.scope,
        hash: request.hash,
        ...(vector && { context: request.context, vector }),
        createdAt,
        expiresAt: Math.ceil(createdAt + ttlMs),
        provider: request.provider,
        model: request.model,
        answer: verdict.answer,
      };
      const fields = entryFieldsSchema.safeParse(entry);
      if (!fields.success) {
        this.counters.refused++;
        const issue = fields.error.issues[0];
        return {
          stored: false,
          reason: 'not_storable',
          detail: `${issue?.path.join('.')}: ${issue?.message}`,
        };
      }
      await this.backend.put(entry);
      this.counters.stores++;
      return { stored: true, id: entry.id };
    } catch (error) {
      this.counters.storeErrors++;
      this.onError(error);
      return {
        stored: false,
        reason: 'backend_error',
        detail: error instanceof Error ? error.message : String(error),
      };
    }
  }

  deleteEntry(scope: string, id: string): Promise<boolean> {
    return this.backend.deleteEntry(scope, id);
  }

  deleteByHash(scope: string, hash: string): Promise<boolean> {
    return this.backend.deleteByHash(scope, hash);
  }

  clearScope(scope: string): Promise<number> {
    return this.backend.clearScope(scope);
  }

  /** A copy of the counters. */
  stats(): CacheStats {
    return { ...this.counters };
  }
}

function clampThreshold(threshold: number): number {
  return Number.isFinite(threshold) ? Math.min(Math.max(threshold, 0), 1) : DEFAULT_THRESHOLD;
}
