import { connectRedis, type RedisConnection } from '@gw/shared/store';

/** Name of the BullMQ queue that carries tool executions from ingress to runner workers. */
export const TOOL_QUEUE = 'gw-mcp-tools';

/**
 * BullMQ's key prefix under the deployment's Redis prefix (GW_REDIS_PREFIX), with a hash tag: on Redis
 * Cluster every key of a queue must share one slot (BullMQ's scripts use several).
 */
export function bullPrefix(redisPrefix: string): string {
  return `${redisPrefix}{bull}`;
}

/**
 * A connection for BullMQ, to whatever topology REDIS_URL names: it must never give up on a command
 * (`maxRetriesPerRequest: null`, which BullMQ's workers require).
 */
export function bullConnection(redisUrl: string): RedisConnection {
  return connectRedis(redisUrl, { maxRetriesPerRequest: null });
}
