import { z } from 'zod';

/** The minimal shape gw relies on in OpenAI answers; everything else passes through untouched. */
export const openAiUsageSchema = z.looseObject({
  prompt_tokens: z
    .number()
    .nullish()
    .transform((tokens) => tokens ?? 0),
  completion_tokens: z
    .number()
    .nullish()
    .transform((tokens) => tokens ?? 0),
  total_tokens: z.number().nullish(),
  prompt_tokens_details: z
    .looseObject({ cached_tokens: z.number().nullish(), audio_tokens: z.number().nullish() })
    .nullish(),
  completion_tokens_details: z
    .looseObject({ reasoning_tokens: z.number().nullish(), audio_tokens: z.number().nullish() })
    .nullish(),
});

/** Tool calls as compatible servers send them: some leave out `type`, a few send arguments as an object. */
export const openAiToolCallSchema = z.looseObject({
  id: z.string().nullish(),
  type: z.string().nullish(),
  function: z.looseObject({
    name: z.string(),
    arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
  }),
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
        tool_calls: z.array(openAiToolCallSchema).nullish(),
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

const openAiToolCallDeltaSchema = z.looseObject({
  index: z.number().optional(),
  id: z.string().nullish(),
  type: z.string().nullish(),
  function: z
    .looseObject({
      name: z.string().nullish(),
      arguments: z.union([z.string(), z.record(z.string(), z.unknown())]).nullish(),
    })
    .nullish(),
});

export const openAiChunkSchema = z.looseObject({
  id: z.string().default(''),
  object: z.string().nullish(),
  created: z.number().default(0),
  model: z.string().default(''),
  choices: z
    .array(
      z.looseObject({
        index: z.number().default(0),
        delta: z.looseObject({ tool_calls: z.array(openAiToolCallDeltaSchema).nullish() }).nullish(),
        text: z.string().nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish()
    .transform((choices) => choices ?? []),
  usage: openAiUsageSchema.nullish(),
});

export const openAiEmbeddingsSchema = z.looseObject({
  model: z.string().default(''),
  data: z.array(z.looseObject({ index: z.number(), embedding: z.array(z.number()) })),
  usage: openAiUsageSchema.nullish(),
});

export type OpenAiUsage = z.infer<typeof openAiUsageSchema>;
export type OpenAiChunk = z.infer<typeof openAiChunkSchema>;
export type OpenAiChatAnswer = z.infer<typeof openAiChatResponseSchema>;
