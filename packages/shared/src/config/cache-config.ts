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
    // Read at start: where entries live is decided then.
    enabled: restartOnly(
      z.boolean().meta({ description: 'Cache answers (exact, and semantic with an embedding model).' }),
    ).default(false),
    types: z
      .array(cacheTypeSchema)
      .min(1)
      .meta({
        description:
          'The kinds of match looked for; a request may narrow them (x-gw-cache-type), never widen them.',
      })
      .default(['exact', 'semantic']),
    ttl_ms: z
      .number()
      .int()
      .min(1)
      .max(86_400_000)
      .meta({
        description: 'How long an entry lives unless the request says (x-gw-cache-ttl); at most a day.',
        unit: 'ms',
      })
      .default(300_000),
    threshold: z
      .number()
      .min(0)
      .max(1)
      .meta({
        description:
          'Least cosine similarity of a semantic match (x-gw-cache-threshold overrides it per request).',
        unit: '0 to 1',
      })
      .default(0.8),
    scope_by_virtual_key: z
      .boolean()
      .meta({
        description:
          'Entries belong to the virtual key that stored them; off, every caller shares one scope.',
      })
      .default(true),
    /**
     * On, callers without a key get exact matches only, may not name the key (`x-gw-cache-key`) and may not ask
     * for a TTL longer than `ttl_ms`, so what they store is the provider's answer to exactly what was asked.
     */
    anonymous: z
      .boolean()
      .meta({
        description:
          'Cache requests without a virtual key too (exact matches only): their shared scope could be written by anyone.',
      })
      .default(false),
    ignore_model: z
      .boolean()
      .meta({ description: 'Share answers across providers and models: for interchangeable models.' })
      .default(false),
    embedding: z
      .strictObject({
        model: embeddingModelSchema,
        /** Ask the model for fewer dimensions (text-embedding-3-*): a smaller index, a faster search. */
        dimensions: z.number().int().min(1).max(16_384).optional(),
      })
      .meta({
        description:
          "The model conversations are embedded with (<provider>/<model>, and optional dimensions), through the router, charged to the request's budgets.",
      })
      .optional(),
    max_turns: z
      .number()
      .int()
      .min(1)
      .max(1_000)
      .meta({
        description: 'Conversations with more turns than this are matched exactly only.',
        unit: 'turns',
      })
      .default(3),
    include_tool_results: z
      .boolean()
      .meta({
        description:
          "Match conversations that carry tool results semantically too (a tool's output is data, not wording).",
      })
      .default(false),
    max_entries_per_scope: restartOnly(
      z
        .number()
        .int()
        .min(1)
        .max(100_000)
        .meta({ description: 'Most entries one scope holds; the oldest makes room.', unit: 'entries' }),
    ).default(10_000),
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
