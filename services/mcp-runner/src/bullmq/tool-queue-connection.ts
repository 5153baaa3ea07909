import { Redis } from 'ioredis';

/** Name of the BullMQ queue that carries tool executions from ingress to runner workers. */
export const TOOL_QUEUE = 'gw-mcp-tools';

/** BullMQ's key prefix under the deployment's Redis prefix (GW_REDIS_PREFIX). */
export function bullPrefix(redisPrefix: string): string {
  return `${redisPrefix}bull`;
}

/** Every connection handed to BullMQ must have this (DESIGN.md §9). */
export function bullConnection(redisUrl: string): Redis {
  return new Redis(redisUrl, { maxRetriesPerRequest: null });
}
