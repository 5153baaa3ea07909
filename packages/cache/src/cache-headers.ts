import type { IncomingHttpHeaders } from 'node:http';
import { invalidRequest } from '@gw/shared';
import { z } from 'zod';
import type { CacheHit, CacheHitType } from './semantic-cache.ts';

/** The request headers that steer the cache for one request. */
export const CACHE_REQUEST_HEADERS = {
  /** A key of the caller's own: replaces the computed exact hash. */
  key: 'x-gw-cache-key',
  /** The entry's TTL: seconds (`30`) or a duration (`500ms`, `30s`, `5m`, `1h`). */
  ttl: 'x-gw-cache-ttl',
  /** The least similarity of a semantic match, 0 to 1. */
  threshold: 'x-gw-cache-threshold',
  /** `exact` or `semantic`: the one kind of match to look for. */
  type: 'x-gw-cache-type',
  /** `true`: look up, but do not store this request's answer. */
  noStore: 'x-gw-cache-no-store',
} as const;

/** The response headers that say what the cache did. */
export const CACHE_RESPONSE_HEADERS = {
  /** `hit` or `miss`. */
  status: 'x-gw-cache',
  /** `exact` or `semantic`, on a hit. */
  type: 'x-gw-cache-hit-type',
  similarity: 'x-gw-cache-similarity',
  /** The id of the entry served (the admin API deletes it by this id). */
  entry: 'x-gw-cache-entry-id',
} as const;

export interface CacheRequestOptions {
  callerKey?: string;
  ttlMs?: number;
  threshold?: number;
  types?: CacheHitType[];
  noStore: boolean;
}

const REQUEST_HEADER_NAMES = Object.values(CACHE_REQUEST_HEADERS);

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

const ttlSchema = z
  .string()
  .regex(/^\d+(\.\d+)?(ms|s|m|h)?$/, 'a number of seconds or a duration such as 500ms, 30s, 5m or 1h')
  .transform((text) => {
    const unit = (/(ms|s|m|h)$/.exec(text)?.[1] ?? 's') as keyof typeof UNIT_MS;
    return Number.parseFloat(text) * UNIT_MS[unit];
  })
  .refine((ms) => ms >= 1, 'at least 1 ms');

const headersSchema = z.object({
  [CACHE_REQUEST_HEADERS.key]: z.string().min(1).max(512).optional(),
  [CACHE_REQUEST_HEADERS.ttl]: ttlSchema.optional(),
  [CACHE_REQUEST_HEADERS.threshold]: z
    .string()
    .regex(/^(0(\.\d+)?|1(\.0+)?|\.\d+)$/, 'a number from 0 to 1')
    .transform(Number)
    .optional(),
  [CACHE_REQUEST_HEADERS.type]: z.enum(['exact', 'semantic']).optional(),
  [CACHE_REQUEST_HEADERS.noStore]: z.enum(['true', 'false']).optional(),
});

/** The cache options of one request, from its headers; a malformed value is a 400 naming the header. */
export function parseCacheHeaders(headers: IncomingHttpHeaders): CacheRequestOptions {
  const values: Record<string, string> = {};
  let sent = 0;
  for (const name of REQUEST_HEADER_NAMES) {
    const value = headers[name];
    if (Array.isArray(value)) throw invalidRequest(`${name}: send it once`, name);
    if (value === undefined) continue;
    values[name] = value.trim();
    sent++;
  }
  // Most requests send none of them: no validation to pay for on the hot path.
  if (sent === 0) return { noStore: false };
  const parsed = headersSchema.safeParse(values);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0]);
    throw invalidRequest(`${name}: ${issue.message}`, name);
  }
  const options = parsed.data;
  const key = options[CACHE_REQUEST_HEADERS.key];
  const ttlMs = options[CACHE_REQUEST_HEADERS.ttl];
  const threshold = options[CACHE_REQUEST_HEADERS.threshold];
  const type = options[CACHE_REQUEST_HEADERS.type];
  return {
    ...(key !== undefined && { callerKey: key }),
    ...(ttlMs !== undefined && { ttlMs }),
    ...(threshold !== undefined && { threshold }),
    ...(type !== undefined && { types: [type] }),
    noStore: options[CACHE_REQUEST_HEADERS.noStore] === 'true',
  };
}

/** The response headers reporting a lookup: hit or miss, and on a hit its type, similarity and entry id. */
export function cacheResultHeaders(hit: CacheHit | undefined): Record<string, string> {
  if (hit === undefined) return { [CACHE_RESPONSE_HEADERS.status]: 'miss' };
  return {
    [CACHE_RESPONSE_HEADERS.status]: 'hit',
    [CACHE_RESPONSE_HEADERS.type]: hit.hit,
    [CACHE_RESPONSE_HEADERS.similarity]: hit.similarity.toFixed(4),
    [CACHE_RESPONSE_HEADERS.entry]: hit.entry.id,
  };
}
