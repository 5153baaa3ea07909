import { z } from 'zod';
import { toolCallSchema } from './chat.ts';

/**
 * What the router answers (CompletionResponse, chunks, embeddings lists). The router builds these; the
 * gRPC client validates what it decodes against them. Loose objects: providers add members gw passes on.
 */
export const usageSchema = z.looseObject({
  prompt_tokens: z.number(),
  completion_tokens: z.number(),
  total_tokens: z.number(),
  /**
   * Parts of `prompt_tokens` billed apart: read from the provider's prompt cache (`cached_tokens`), and written
   * to it (`cache_write_tokens`: Anthropic's and Bedrock's cache creation, billed above the input price), of
   * which `cache_write_1h_tokens` were written for an hour (Anthropic: billed above a 5-minute write), and the
   * audio of the prompt (`audio_tokens`: OpenAI, billed at its own price), and its images (`image_tokens`:
   * OpenAI's image models, Gemini's IMAGE modality, billed at their own price).
   */
  prompt_tokens_details: z
    .looseObject({
      cached_tokens: z.number().optional(),
      cache_write_tokens: z.number().optional(),
      cache_write_1h_tokens: z.number().optional(),
      audio_tokens: z.number().optional(),
      image_tokens: z.number().optional(),
    })
    .optional(),
  /**
   * Parts of `completion_tokens`: spent reasoning (billed as output, and counted in it), audio generated
   * (OpenAI, billed at its own price), and images generated (`image_tokens`: gpt-image-1, Gemini image models).
   */
  completion_tokens_details: z
    .looseObject({
      reasoning_tokens: z.number().optional(),
      audio_tokens: z.number().optional(),
      image_tokens: z.number().optional(),
    })
    .optional(),
  /**
   * What a call was billed for beside tokens, priced per unit (`ModelPrice.per_image`, `per_audio_second`,
   * `per_million_characters`): images made (DALL·E, Imagen), seconds of audio transcribed (Whisper, Mistral's
   * `prompt_audio_seconds`), characters spoken (tts-1). Gw's own member: set by the adapters and the
   * pass-through usage reader, never sent by a provider under this name.
   */
  units: z
    .looseObject({
      images: z.number().optional(),
      audio_seconds: z.number().optional(),
      characters: z.number().optional(),
    })
    .optional(),
  /**
   * A batch's usage, read from a completed batch object (`GET /v1/batches/{id}`): priced at the model's batch
   * prices, charged once per batch id. Gw's own member, set by the pass-through usage reader.
   */
  batch: z.looseObject({ id: z.string(), model: z.string().optional() }).optional(),
});

export const finishReasonSchema = z.enum(['stop', 'length', 'tool_calls', 'content_filter']).nullable();

const responseMessageSchema = z.looseObject({
  role: z.literal('assistant'),
  content: z.string().nullable(),
  tool_calls: z.array(toolCallSchema).optional(),
  refusal: z.string().nullable().optional(),
});

export const chatChoiceSchema = z.looseObject({
  index: z.number(),
  message: responseMessageSchema,
  finish_reason: finishReasonSchema,
});

export const textChoiceSchema = z.looseObject({
  index: z.number(),
  text: z.string(),
  finish_reason: finishReasonSchema,
});

const extraFieldsSchema = z.looseObject({
  provider: z.string(),
  model_params: z.record(z.string(), z.unknown()),
  /** Seconds spent on the upstream call that answered. */
  latency: z.number(),
  raw_response: z.unknown().optional(),
});

/** gw's completion answer, chat and text (README.md "Requests"). */
export const completionResponseSchema = z.looseObject({
  id: z.string(),
  object: z.enum(['chat.completion', 'text.completion', 'text_completion']),
  choices: z.array(z.union([chatChoiceSchema, textChoiceSchema])),
  model: z.string(),
  created: z.number(),
  usage: usageSchema,
  system_fingerprint: z.string().nullable().optional(),
  extra_fields: extraFieldsSchema,
});

const chunkToolCallSchema = z.looseObject({
  index: z.number(),
  id: z.string().optional(),
  type: z.literal('function').optional(),
  function: z.looseObject({ name: z.string().optional(), arguments: z.string().optional() }).optional(),
});

/** One `chat.completion.chunk` of a stream, OpenAI's shape (text streams carry `text`). */
export const chatCompletionChunkSchema = z.looseObject({
  id: z.string(),
  object: z.enum(['chat.completion.chunk', 'text_completion']),
  created: z.number(),
  model: z.string(),
  choices: z.array(
    z.looseObject({
      index: z.number(),
      delta: z
        .looseObject({
          role: z.literal('assistant').optional(),
          content: z.string().nullable().optional(),
          tool_calls: z.array(chunkToolCallSchema).optional(),
          refusal: z.string().nullable().optional(),
        })
        .optional(),
      text: z.string().optional(),
      finish_reason: finishReasonSchema,
    }),
  ),
  usage: usageSchema.nullable().optional(),
  extra_fields: extraFieldsSchema.partial().optional(),
});

/** OpenAI's embeddings list, with gw's `extra_fields`; `embedding` is base64 text when the caller asked for it. */
export const embeddingsListSchema = z.looseObject({
  object: z.literal('list'),
  data: z.array(
    z.looseObject({
      object: z.literal('embedding'),
      index: z.number(),
      embedding: z.union([z.array(z.number()), z.string()]),
    }),
  ),
  model: z.string(),
  usage: z.looseObject({ prompt_tokens: z.number(), total_tokens: z.number() }),
  extra_fields: extraFieldsSchema,
});

export type Usage = z.infer<typeof usageSchema>;
export type FinishReason = z.infer<typeof finishReasonSchema>;
export type ChatChoice = z.infer<typeof chatChoiceSchema>;
export type TextChoice = z.infer<typeof textChoiceSchema>;
export type CompletionResponse = z.infer<typeof completionResponseSchema>;
export type ChatCompletionChunk = z.infer<typeof chatCompletionChunkSchema>;
export type EmbeddingsList = z.infer<typeof embeddingsListSchema>;

export const EMPTY_USAGE: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
