// The open reservations of a cluster's Redis, read as an outside observer: the journal of reservations is
// spread over 64 slots (`<prefix>{res:<0-63>}reservations`, packages/shared/src/store/redis-store.ts).
import type { Redis } from 'ioredis';

const JOURNAL_SHARDS = 64;

/** Every open reservation's stored value (`<alternative>\n<plan JSON>`), over every shard of the journal. */
export async function openReservations(redis: Redis, prefix: string): Promise<string[]> {
  const shards = await Promise.all(
    Array.from({ length: JOURNAL_SHARDS }, (_, shard) => redis.hvals(`${prefix}{res:${shard}}reservations`)),
  );
  return shards.flat();
}
