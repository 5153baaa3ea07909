import { z } from 'zod';
import { providerNameSchema } from '../schemas/providers.ts';
import { restartOnly } from './declared-fields.ts';

/** `<provider>/<model>`: the provider part must be a provider name, the model part non-empty. */
const embeddingModelSchema = z
  .string()
  .regex(/^[^/]+\/.+$/, 'must be <provider>/<model>, e.g. openai/text-embedding-3-small')
  .refine((model) => providerNameSchema.safeParse(model.slice(0, model.indexOf('/'))).success, {
    error: 'the provider part must be lowercase letters, digits, "-" or "_", starting with a letter',
  });

const cacheTypeSchema = z.enum(['exact', 'semantic']);

/**
 * The response cache (docs/cache.md): off unless `enabled`. Exact matches need nothing more;
 * semantic matches need an embedding model, which any provider gw serves embeddings for can supply.
 */
export const cacheConfigSchema = z
  .strictObject({
    /** Read at start: where entries live is decided then. */
    enabled: restartOnly(z.boolean()).default(false),
    /** The kinds of match looked for; a request may narrow them (`x-gw-cache-type`), never widen them. */
    types: z.array(cacheTypeSchema).min(1).default(['exact', 'semantic']),
    /** How long an entry lives unless the request says (`x-gw-cache-ttl`); at most a day. */
    ttl_ms: z.number().int().min(1).max(86_400_000).default(300_000),
    /** Least cosine similarity of a semantic match (`x-gw-cache-threshold` overrides it per request). */
    threshold: z.number().min(0).max(1).default(0.8),
    /** Entries belong to the virtual key that stored them; off, every caller shares one scope. */
    scope_by_virtual_key: z.boolean().default(true),
    /**
     * Cache requests without a virtual key too (off by default: their shared scope could be written by anyone).
     * On, such callers get exact matches only, may not name the key (`x-gw-cache-key`) and may not ask for a TTL
     * longer than `ttl_ms`, so what they store is the provider's answer to exactly what was asked.
     */
    anonymous: z.boolean().default(false),
    /** Share answers across providers and models (the key leaves them out): for interchangeable models. */
    ignore_model: z.boolean().default(false),
    /** The model conversations are embedded with, through the router, charged to the request's budgets. */
    embedding: z
      .strictObject({
        model: embeddingModelSchema,
        /** Ask the model for fewer dimensions (text-embedding-3-*): a smaller index, a faster search. */
        dimensions: z.number().int().min(1).max(16_384).optional(),
      })
      .optional(),
    /** Conversations with more turns than this are matched exactly only. */
    max_turns: z.number().int().min(1).max(1_000).default(3),
    /** Match conversations that carry tool results semantically too (a tool's output is data, not wording). */
    include_tool_results: z.boolean().default(false),
    /** Most entries one scope holds; the oldest makes room. Bounds the in-process index (docs/cache.md). */
    max_entries_per_scope: restartOnly(z.number().int().min(1).max(100_000)).default(10_000),
  })
  .superRefine((cache, context) => {
    if (cache.enabled && cache.types.includes('semantic') && !cache.embedding) {
      context.addIssue({
        code: 'custom',
        path: ['embedding'],
        message:
          'is required for semantic matches: set embedding.model (<provider>/<model>), or types: [exact]',
      });
    }
  });

export type CacheConfig = z.infer<typeof cacheConfigSchema>;
