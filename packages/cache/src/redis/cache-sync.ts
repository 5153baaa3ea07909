import { z } from 'zod';
import type { CacheEntry } from '../cache-entry.ts';
import { decodeVector, encodeVector } from '../cache-entry.ts';
import type { IndexRecord } from '../cache-index.ts';

/**
 * What one replica tells the others on the cache's channel, so their in-process indexes follow its writes.
 * A put carries the index's share of the entry (its vector included), never the answer: a hit reads that
 * from Redis. `origin` lets the sender skip its own notices (it applied them already).
 */
const recordSchema = z.object({
  id: z.string().min(1),
  scope: z.string().min(1),
  hash: z.string().min(1),
  context: z.string().optional(),
  createdAt: z.number(),
  expiresAt: z.number(),
  vector: z.base64().transform(decodeVector).optional(),
});

export const syncMessageSchema = z.discriminatedUnion('op', [
  z.object({
    op: z.literal('put'),
    origin: z.string(),
    record: recordSchema,
    /** Ids the write removed from the scope (the entry it replaced, evicted ones). */
    removed: z.array(z.string()),
  }),
  z.object({ op: z.literal('delete'), origin: z.string(), scope: z.string(), ids: z.array(z.string()) }),
  z.object({ op: z.literal('clear'), origin: z.string(), scope: z.string() }),
]);

export type SyncMessage = z.infer<typeof syncMessageSchema>;

/** The notice of a put. */
export function putMessage(origin: string, entry: CacheEntry, removed: string[]): string {
  const { id, scope, hash, context, createdAt, expiresAt, vector } = entry;
  return JSON.stringify({
    op: 'put',
    origin,
    record: { id, scope, hash, context, createdAt, expiresAt, vector: vector && encodeVector(vector) },
    removed,
  });
}

/** The index's share of an entry. */
export function recordOf(entry: CacheEntry): IndexRecord {
  const { id, scope, hash, context, createdAt, expiresAt, vector } = entry;
  return { id, scope, hash, context, createdAt, expiresAt, vector };
}
