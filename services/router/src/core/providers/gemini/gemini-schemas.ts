import { z } from 'zod';

/** Tokens of one modality (`TEXT`, `IMAGE`, `AUDIO`, `VIDEO`, `DOCUMENT`); a count of zero may be left out. */
const modalityTokenCountSchema = z.looseObject({
  modality: z.string().optional(),
  tokenCount: z.number().optional(),
});

/** The minimal shape gw relies on in Gemini answers; everything else passes through untouched in `raw`. */
export const geminiUsageSchema = z.looseObject({
  promptTokenCount: z.number().default(0),
  candidatesTokenCount: z.number().default(0),
  thoughtsTokenCount: z.number().optional(),
  totalTokenCount: z.number().optional(),
  cachedContentTokenCount: z.number().optional(),
  /** The prompts of tools the model ran (code execution, search grounding): billed as input. */
  toolUsePromptTokenCount: z.number().optional(),
  /** The prompt's tokens by modality (`promptTokenCount` is their sum), and the tool-use prompts'. */
  promptTokensDetails: z.array(modalityTokenCountSchema).optional(),
  toolUsePromptTokensDetails: z.array(modalityTokenCountSchema).optional(),
  /** The answer's tokens by modality, thoughts left out (`candidatesTokenCount` is their sum). */
  candidatesTokensDetails: z.array(modalityTokenCountSchema).optional(),
});

const geminiPartSchema = z.looseObject({
  text: z.string().optional(),
  /** Thought summaries of thinking models: not part of the answer. */
  thought: z.boolean().optional(),
  functionCall: z
    .looseObject({ name: z.string(), args: z.record(z.string(), z.unknown()).nullish() })
    .optional(),
});

const geminiCandidateSchema = z.looseObject({
  index: z.number().optional(),
  content: z.looseObject({ parts: z.array(geminiPartSchema).default([]) }).optional(),
  finishReason: z.string().optional(),
});

/** One GenerateContentResponse: the whole answer, or one event of a stream. */
export const geminiResponseSchema = z.looseObject({
  candidates: z.array(geminiCandidateSchema).default([]),
  usageMetadata: geminiUsageSchema.optional(),
  responseId: z.string().optional(),
  modelVersion: z.string().optional(),
  promptFeedback: z.looseObject({ blockReason: z.string().optional() }).optional(),
});

export const geminiEmbeddingsSchema = z.looseObject({
  embeddings: z.array(z.looseObject({ values: z.array(z.number()) })),
  usageMetadata: z.looseObject({ promptTokenCount: z.number().default(0) }).optional(),
});

export type GeminiUsage = z.infer<typeof geminiUsageSchema>;
export type GeminiModalityTokenCount = z.infer<typeof modalityTokenCountSchema>;
export type GeminiCandidate = z.infer<typeof geminiCandidateSchema>;
export type GeminiResponse = z.infer<typeof geminiResponseSchema>;
