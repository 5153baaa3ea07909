import { z } from 'zod';

/**
 * The minimal shape gw relies on in Cohere's v2 answers (https://docs.cohere.com/reference/chat); everything
 * else passes through untouched in `raw`.
 */
export const cohereUsageSchema = z.looseObject({
  billed_units: z
    .looseObject({ input_tokens: z.number().optional(), output_tokens: z.number().optional() })
    .nullish(),
  tokens: z
    .looseObject({ input_tokens: z.number().optional(), output_tokens: z.number().optional() })
    .nullish(),
  cached_tokens: z.number().nullish(),
});

const cohereToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.string().optional(),
  function: z.looseObject({ name: z.string(), arguments: z.string().nullish() }),
});

export const cohereChatResponseSchema = z.looseObject({
  id: z.string().default(''),
  finish_reason: z.string().nullish(),
  message: z.looseObject({
    role: z.string().optional(),
    // Text parts carry `text`; reasoning models add `thinking` parts, which gw does not surface.
    content: z.array(z.looseObject({ type: z.string(), text: z.string().optional() })).nullish(),
    tool_calls: z.array(cohereToolCallSchema).nullish(),
  }),
  usage: cohereUsageSchema.nullish(),
});

export const cohereEmbedResponseSchema = z.looseObject({
  id: z.string().optional(),
  embeddings: z.looseObject({ float: z.array(z.array(z.number())) }),
  meta: z
    .looseObject({
      billed_units: z.looseObject({ input_tokens: z.number().optional() }).nullish(),
    })
    .nullish(),
});

/** Stream events, one schema per `type` gw acts on; other types (citations, debug) are ignored. */
export const cohereStreamEventSchemas = {
  'message-start': z.looseObject({ id: z.string().nullish() }),
  'content-start': z.looseObject({
    delta: z.looseObject({
      message: z.looseObject({
        content: z.looseObject({ type: z.string().optional(), text: z.string().optional() }),
      }),
    }),
  }),
  'content-delta': z.looseObject({
    delta: z.looseObject({
      message: z.looseObject({ content: z.looseObject({ text: z.string().optional() }) }),
    }),
  }),
  'tool-call-start': z.looseObject({
    delta: z.looseObject({ message: z.looseObject({ tool_calls: cohereToolCallSchema }) }),
  }),
  'tool-call-delta': z.looseObject({
    delta: z.looseObject({
      message: z.looseObject({
        tool_calls: z.looseObject({ function: z.looseObject({ arguments: z.string().default('') }) }),
      }),
    }),
  }),
  'message-end': z.looseObject({
    delta: z
      .looseObject({
        finish_reason: z.string().nullish(),
        error: z.string().nullish(),
        usage: cohereUsageSchema.nullish(),
      })
      .default({}),
  }),
} as const;

export type CohereUsage = z.infer<typeof cohereUsageSchema>;
export type CohereChatResponse = z.infer<typeof cohereChatResponseSchema>;
