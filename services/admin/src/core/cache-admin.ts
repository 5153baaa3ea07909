import { type CacheBackend, callerKeyHash } from '@gw/cache';
import { GatewayError, methodNotAllowed, noEndpoint, notFound } from '@gw/shared';
import type { AdminRequest, AdminResult } from './admin-app.ts';

export interface CacheAdminOptions {
  /** Where the cache's entries live (the ingress's in embedded mode, Redis in a cluster); none when it is off. */
  backend?: CacheBackend | undefined;
}

const EXACT_HASH = /^[0-9a-f]{64}$/;

/**
 * `/api/cache/scopes/{scope}[/entries/{id} | /keys/{key}]`, DELETE only: removes one entry (by the id a hit
 * reports in `x-gw-cache-entry-id`), the entry of a cache key, or everything of a scope (`vk:<virtual key
 * id>`, `anonymous`, or `global`; docs/cache.md). In a cluster a removal reaches every replica's index.
 */
export function createCacheAdmin(options: CacheAdminOptions) {
  async function cache(request: AdminRequest, path: string): Promise<AdminResult> {
    const [, collection, scope, kind, id, ...rest] = request.segments;
    const shaped =
      collection === 'scopes' && scope && rest.length === 0 && (kind === undefined || id !== undefined);
    if (!shaped) throw noEndpoint(request.method, path);
    if (request.method !== 'DELETE')
      throw methodNotAllowed({ method: request.method, path, allowed: 'DELETE' });
    const { backend } = options;
    if (!backend) {
      throw new GatewayError({
        type: 'not_found',
        message: 'the response cache is not enabled on this gateway (cache.enabled)',
      });
    }
    if (kind === undefined) return { status: 200, body: { scope, removed: await backend.clearScope(scope) } };
    if (kind === 'entries') {
      if (!(await backend.deleteEntry(scope, id!))) throw notFound(`cache entry ${id} of scope ${scope}`);
      return { status: 200, body: { scope, id, removed: 1 } };
    }
    if (kind !== 'keys') throw noEndpoint(request.method, path);
    // A key is the caller's own (`x-gw-cache-key`), or an exact hash as the cache computed it.
    const hashes = [callerKeyHash(id!), ...(EXACT_HASH.test(id!) ? [id!] : [])];
    let removed = 0;
    for (const hash of hashes) if (await backend.deleteByHash(scope, hash)) removed++;
    if (removed === 0) throw notFound(`an entry of cache key ${id} in scope ${scope}`);
    return { status: 200, body: { scope, key: id, removed } };
  }

  return { cache };
}
