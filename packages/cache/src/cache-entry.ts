import { type ChatCompletionChunk, chatCompletionChunkSchema, completionResponseSchema } from '@gw/shared';
import { z } from 'zod';

/** Most chunks one stored stream may hold: a stream longer than this is not stored (memory is bounded). */
export const MAX_STORED_CHUNKS = 20_000;

/**
 * A stored answer: the whole response, or the chunks of a stream in order. Either is served either way
 * (answer-conversion.ts), so a streamed request may hit a whole answer and the other way round.
 */
export const cachedAnswerSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('whole'), response: completionResponseSchema }),
  z.object({
    kind: z.literal('chunks'),
    chunks: z.array(chatCompletionChunkSchema).min(1).max(MAX_STORED_CHUNKS),
  }),
]);

const hashSchema = z.string().regex(/^[0-9a-f]{64}$/, 'a hex sha256');

/** The members of an entry other than its vector, alike in memory and on the wire. */
const entryFields = {
  /** Letters, digits, `_` and `-`: Redis scripts read it from the start of the entry's JSON. */
  id: z.string().regex(/^[A-Za-z0-9_-]{1,128}$/),
  /** The virtual key id the entry belongs to, or a global scope: an entry is never served to another scope. */
  scope: z.string().min(1).max(512),
  /** The exact hash (cache-key.ts). */
  hash: hashSchema,
  /** The context hash: semantic neighbours must share it. Present when the entry has a vector. */
  context: hashSchema.optional(),
  /** Epoch ms. */
  createdAt: z.number().int().nonnegative(),
  /** Epoch ms; the entry is gone from then on. */
  expiresAt: z.number().int().nonnegative(),
  /** The provider and model that answered. */
  provider: z.string(),
  model: z.string(),
  answer: cachedAnswerSchema,
};

const vectorSchema = z
  .custom<Float32Array>((value) => value instanceof Float32Array, 'a Float32Array')
  .refine((vector) => vector.length > 0 && vector.every(Number.isFinite), 'a non-empty finite vector');

/** One cache entry in memory. `vector` (normalised) makes it findable by semantic match. */
export const cacheEntrySchema = z.object({ ...entryFields, vector: vectorSchema.optional() });

/**
 * The entry as JSON text (Redis values, pub/sub): the vector as base64 of its float32 bytes, a quarter of its
 * size as a JSON array of numbers, and exact.
 */
const wireEntrySchema = z.object({
  ...entryFields,
  vector: z
    .base64()
    .transform((text) => decodeVector(text))
    .pipe(vectorSchema)
    .optional(),
});

export type CachedAnswer = z.infer<typeof cachedAnswerSchema>;
export type CacheEntry = z.infer<typeof cacheEntrySchema>;

/** The entry as JSON text, its id first (the Redis scripts read it there). */
export function encodeEntry(entry: CacheEntry): string {
  const { id, vector, ...rest } = entry;
  return JSON.stringify({ id, ...rest, vector: vector && encodeVector(vector) });
}

/** The entry a JSON text holds; throws a ZodError (or SyntaxError) when it is not one. */
export function decodeEntry(text: string): CacheEntry {
  return wireEntrySchema.parse(JSON.parse(text));
}

export function encodeVector(vector: Float32Array): string {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength).toString('base64');
}

export function decodeVector(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  if (bytes.byteLength % 4 !== 0) return new Float32Array(0);
  // Copied: a Buffer from the pool may sit at an offset that is not a multiple of 4.
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

export type StorableVerdict = { storable: true; answer: CachedAnswer } | { storable: false; reason: string };

/**
 * Only a complete, successful answer is stored: something that is not an answer (an error body, a thrown
 * error) fails the schema, and an answer whose choices did not all finish (a stream cut off, a content
 * filter stopping it midway) is partial.
 */
export function checkStorable(candidate: unknown): StorableVerdict {
  const parsed = cachedAnswerSchema.safeParse(candidate);
  if (!parsed.success) return { storable: false, reason: 'not an answer' };
  const answer = parsed.data;
  if (answer.kind === 'whole') {
    const { choices } = answer.response;
    if (choices.length === 0) return { storable: false, reason: 'no choices' };
    if ('error' in answer.response) return { storable: false, reason: 'an error' };
    const unfinished = choices.find((choice) => !isComplete(choice.finish_reason));
    return unfinished
      ? { storable: false, reason: `choice ${unfinished.index} did not finish` }
      : { storable: true, answer };
  }
  return chunksStorable(answer.chunks)
    ? { storable: true, answer }
    : { storable: false, reason: 'a partial stream' };
}

/** The guard form of checkStorable. */
export function isStorable(candidate: unknown): candidate is CachedAnswer {
  return checkStorable(candidate).storable;
}

function isComplete(reason: string | null): boolean {
  return reason === 'stop' || reason === 'length' || reason === 'tool_calls';
}

/** Every choice the stream opened finished, and no chunk reports an error. */
function chunksStorable(chunks: readonly ChatCompletionChunk[]): boolean {
  const open = new Set<number>();
  const finished = new Set<number>();
  for (const chunk of chunks) {
    if ('error' in chunk) return false;
    for (const choice of chunk.choices) {
      open.add(choice.index);
      if (choice.finish_reason !== null) {
        if (!isComplete(choice.finish_reason)) return false;
        finished.add(choice.index);
      }
    }
  }
  return open.size > 0 && [...open].every((index) => finished.has(index));
}
