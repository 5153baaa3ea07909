import { z } from 'zod';

/** The minimal shape gw relies on in Bedrock answers; everything else passes through in `raw`. */
export const bedrockUsageSchema = z.looseObject({
  inputTokens: z.number().default(0),
  outputTokens: z.number().default(0),
  totalTokens: z.number().optional(),
  cacheReadInputTokens: z.number().nullish(),
  cacheWriteInputTokens: z.number().nullish(),
});

const toolUseSchema = z.looseObject({
  toolUseId: z.string(),
  name: z.string(),
  input: z.unknown(),
});

const bedrockContentBlockSchema = z.looseObject({
  text: z.string().optional(),
  toolUse: toolUseSchema.optional(),
});

export const bedrockConverseResponseSchema = z.looseObject({
  output: z.looseObject({
    message: z
      .looseObject({ role: z.string().optional(), content: z.array(bedrockContentBlockSchema).default([]) })
      .optional(),
  }),
  stopReason: z.string().optional(),
  usage: bedrockUsageSchema.optional(),
});

/** ConverseStream events, by the `:event-type` header of their frame. */
export const bedrockStreamEventSchemas = {
  messageStart: z.looseObject({ role: z.string().optional() }),
  contentBlockStart: z.looseObject({
    contentBlockIndex: z.number().default(0),
    start: z.looseObject({ toolUse: z.looseObject({ toolUseId: z.string(), name: z.string() }).optional() }),
  }),
  contentBlockDelta: z.looseObject({
    contentBlockIndex: z.number().default(0),
    delta: z.looseObject({
      text: z.string().optional(),
      toolUse: z.looseObject({ input: z.string().default('') }).optional(),
    }),
  }),
  contentBlockStop: z.looseObject({ contentBlockIndex: z.number().default(0) }),
  messageStop: z.looseObject({ stopReason: z.string().optional() }),
  metadata: z.looseObject({ usage: bedrockUsageSchema.optional() }),
} as const;

/** Titan text embeddings (InvokeModel), one input per call. */
export const bedrockTitanEmbeddingSchema = z.looseObject({
  embedding: z.array(z.number()),
  inputTextTokenCount: z.number().default(0),
});

export type BedrockUsage = z.infer<typeof bedrockUsageSchema>;
export type BedrockConverseResponse = z.infer<typeof bedrockConverseResponseSchema>;
export type BedrockStreamEventType = keyof typeof bedrockStreamEventSchemas;
