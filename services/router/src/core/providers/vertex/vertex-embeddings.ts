import { z } from 'zod';
import type { AdapterContext, EmbeddingsInput, EmbeddingsResult } from '../adapter.ts';
import { readGeminiErrorMessage } from '../gemini/gemini-error.ts';
import { callJson } from '../upstream-call.ts';

/** Vertex's text-embedding `:predict` answer; token counts come per input, in snake_case as predict speaks. */
const vertexEmbeddingsSchema = z.looseObject({
  predictions: z.array(
    z.looseObject({
      embeddings: z.looseObject({
        values: z.array(z.number()),
        statistics: z
          .looseObject({ token_count: z.number().optional(), tokenCount: z.number().optional() })
          .optional(),
      }),
    }),
  ),
});

/**
 * Embeddings through Vertex's `:predict` (text-embedding-005, gemini-embedding-001…): one instance per
 * input, the vectors back in the same order.
 */
export async function vertexEmbeddings(
  input: EmbeddingsInput,
  context: AdapterContext,
  endpoint: { path: string; headers: Record<string, string> },
): Promise<EmbeddingsResult> {
  const texts = typeof input.input === 'string' ? [input.input] : input.input;
  const taskType = input.params['task_type'] ?? input.params['taskType'];
  const dimensions = input.params['dimensions'] ?? input.params['output_dimensionality'];
  const body = {
    instances: texts.map((content) => ({ content, ...(taskType ? { task_type: taskType } : {}) })),
    ...(dimensions ? { parameters: { outputDimensionality: dimensions } } : {}),
  };
  const { raw, parsed } = await callJson(
    context,
    { path: endpoint.path, headers: endpoint.headers, body: JSON.stringify(body) },
    { schema: vertexEmbeddingsSchema, readMessage: readGeminiErrorMessage },
  );
  const promptTokens = parsed.predictions.reduce((sum, prediction) => {
    const statistics = prediction.embeddings.statistics;
    return sum + (statistics?.token_count ?? statistics?.tokenCount ?? 0);
  }, 0);
  return {
    model: input.model,
    data: parsed.predictions.map((prediction, index) => ({ index, embedding: prediction.embeddings.values })),
    usage: { prompt_tokens: promptTokens, completion_tokens: 0, total_tokens: promptTokens },
    raw,
  };
}
