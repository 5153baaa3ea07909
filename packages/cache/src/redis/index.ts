// `@gw/cache/redis`: the cluster-mode backend (loads ioredis).

/** @public The options a composition root connects it with. */
export type { RedisCacheBackendOptions } from './redis-cache-backend.ts';
export { RedisCacheBackend } from './redis-cache-backend.ts';
