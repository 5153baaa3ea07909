import { type CacheBackend, callerKeyHash } from '@gw/cache';
import { GatewayError, notFound } from '@gw/shared';
import type { CacheRemoval } from '../../api-types.ts';
import { type AdminRoute, route } from '../http/admin-route.ts';

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
export function createCacheAdmin(options: CacheAdminOptions): AdminRoute[] {
  function backendOf(): CacheBackend {
    if (options.backend) return options.backend;
    throw new GatewayError({
      type: 'not_found',
      message: 'the response cache is not enabled on this gateway (cache.enabled)',
    });
  }

  return [
    route({
      method: 'DELETE',
      path: '/cache/scopes/:scope',
      permission: 'cache:write',
      handle: async ({ params: { scope } }) => ({
        status: 200,
        body: { scope, removed: await backendOf().clearScope(scope) } satisfies CacheRemoval,
      }),
    }),
    route({
      method: 'DELETE',
      path: '/cache/scopes/:scope/entries/:id',
      permission: 'cache:write',
      handle: async ({ params: { scope, id } }) => {
        if (!(await backendOf().deleteEntry(scope, id)))
          throw notFound(`cache entry ${id} of scope ${scope}`);
        return { status: 200, body: { scope, id, removed: 1 } satisfies CacheRemoval };
      },
    }),
    route({
      method: 'DELETE',
      path: '/cache/scopes/:scope/keys/:key',
      permission: 'cache:write',
      handle: async ({ params: { scope, key } }) => {
        const backend = backendOf();
        // A key is the caller's own (`x-gw-cache-key`), or an exact hash as the cache computed it.
        const hashes = [callerKeyHash(key), ...(EXACT_HASH.test(key) ? [key] : [])];
        let removed = 0;
        for (const hash of hashes) if (await backend.deleteByHash(scope, hash)) removed++;
        if (removed === 0) throw notFound(`an entry of cache key ${key} in scope ${scope}`);
        return { status: 200, body: { scope, key, removed } satisfies CacheRemoval };
      },
    }),
  ];
}
