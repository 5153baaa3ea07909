import { z } from 'zod';

/** The minimal shape gw relies on in OpenAI answers; everything else passes through untouched. */
export const openAiUsageSchema = z.looseObject({
  prompt_tokens: z.number().default(0),
  completion_tokens: z.number().default(0),
  total_tokens: z.number().optional(),
  prompt_tokens_details: z.looseObject({ cached_tokens: z.number().optional() }).nullish(),
  completion_tokens_details: z.looseObject({ reasoning_tokens: z.number().optional() }).nullish(),
});

export const openAiChatResponseSchema = z.looseObject({
  id: z.string().default(''),
  created: z.number().default(() => Math.floor(Date.now() / 1000)),
  model: z.string().default(''),
  system_fingerprint: z.string().nullish(),
  choices: z.array(
    z.looseObject({
      index: z.number().default(0),
      message: z.looseObject({
        role: z.string().default('assistant'),
        content: z.string().nullish(),
        tool_calls: z.array(z.looseObject({})).nullish(),
      }),
      finish_reason: z.string().nullish(),
    }),
  ),
  usage: openAiUsageSchema.nullish(),
});

export const openAiTextResponseSchema = z.looseObject({
  id: z.string().default(''),
  created: z.number().default(() => Math.floor(Date.now() / 1000)),
  model: z.string().default(''),
  choices: z.array(
    z.looseObject({
      index: z.number().default(0),
      text: z.string().default(''),
      finish_reason: z.string().nullish(),
    }),
  ),
  usage: openAiUsageSchema.nullish(),
});

export const openAiChunkSchema = z.looseObject({
  id: z.string().default(''),
  created: z.number().default(0),
  model: z.string().default(''),
  choices: z.array(z.looseObject({})).default([]),
  usage: openAiUsageSchema.nullish(),
});

export const openAiEmbeddingsSchema = z.looseObject({
  model: z.string().default(''),
  data: z.array(z.looseObject({ index: z.number(), embedding: z.array(z.number()) })),
  usage: openAiUsageSchema.nullish(),
});

export type OpenAiUsage = z.infer<typeof openAiUsageSchema>;
