import { MemoryStore } from './memory-store.ts';
import { RedisStore } from './redis-store.ts';
import type { Store } from './store.ts';

export { AllowanceStore } from './allowance-store.ts';
export { type Collection, defineCollection, logInvalidDocuments } from './collection.ts';
export { type ChangeFollower, followChanges } from './follow-changes.ts';
export { MemoryStore } from './memory-store.ts';
export { connectRedis, type RedisConnection } from './redis-connection.ts';
export type { OneTagMigrationPlan } from './redis-migration.ts';
export { RedisStore } from './redis-store.ts';
export type { CounterAdjustment, CounterCheck, FailedCheck, Store } from './store.ts';

/** The environment variables that choose the store. */
export interface StoreEnvironment {
  /** Cluster mode when set (an empty value counts as unset). */
  REDIS_URL?: string;
  /** Embedded mode's data directory; `./data` by default. */
  GATEWAY_DATA_DIR?: string;
  /** Prefix of every Redis key and channel; `gw:` by default. */
  GW_REDIS_PREFIX?: string;
  /** Most time one Redis command may take before it fails (503); 500 ms by default. */
  GW_REDIS_COMMAND_TIMEOUT_MS?: number;
}

/** Redis when REDIS_URL is set, else a MemoryStore persisted to the data directory. */
export function createStore(env: StoreEnvironment): Promise<Store> {
  if (env.REDIS_URL) {
    return RedisStore.connect({
      url: env.REDIS_URL,
      prefix: env.GW_REDIS_PREFIX ?? 'gw:',
      ...(env.GW_REDIS_COMMAND_TIMEOUT_MS !== undefined && {
        commandTimeoutMs: env.GW_REDIS_COMMAND_TIMEOUT_MS,
      }),
    });
  }
  return MemoryStore.open({ dataDir: env.GATEWAY_DATA_DIR ?? './data' });
}
