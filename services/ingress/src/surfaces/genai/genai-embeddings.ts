import { type EmbeddingsList, invalidRequest, validate } from '@gw/shared';
import { z } from 'zod';
import type { ParsedCompletion, Target } from '../../request/parse-request.ts';

const embedContentSchema = z.looseObject({
  content: z.looseObject({ parts: z.array(z.looseObject({ text: z.string().optional() })) }),
  taskType: z.string().optional(),
  outputDimensionality: z.number().int().positive().optional(),
});

const batchSchema = z.looseObject({ requests: z.array(embedContentSchema).min(1) });

type EmbedContent = z.infer<typeof embedContentSchema>;

function textOf(request: EmbedContent, field: string): string {
  const text = request.content.parts.map((part) => part.text ?? '').join('');
  if (!text) throw invalidRequest(`${field}.content: has no text to embed`, `${field}.content`);
  return text;
}

/** Gemini's task type only means something to Google's models; the dimensions to every provider. */
function params(first: EmbedContent, provider: string): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  if (first.outputDimensionality) params['dimensions'] = first.outputDimensionality;
  if (first.taskType && (provider === 'gemini' || provider === 'vertex'))
    params['task_type'] = first.taskType;
  return params;
}

/** `:embedContent` (one text) or `:batchEmbedContents` (several) as gw's embeddings operation. */
export function genAiToEmbeddings(options: {
  body: unknown;
  target: Target;
  batch: boolean;
}): ParsedCompletion {
  const requests = options.batch
    ? validate(batchSchema, options.body).requests
    : [validate(embedContentSchema, options.body)];
  const input = requests.map((request, index) =>
    textOf(request, options.batch ? `requests[${index}]` : 'content'),
  );
  return {
    operation: 'embeddings',
    target: options.target,
    fallbacks: [],
    input: options.batch ? input : input[0]!,
    params: params(requests[0]!, options.target.provider),
    stream: false,
  };
}

/** The router's embeddings list as Gemini answers them. */
export function embeddingsToGenAi(list: EmbeddingsList, batch: boolean): unknown {
  const embeddings = list.data.map((item) => ({ values: item.embedding }));
  return batch ? { embeddings } : { embedding: embeddings[0] };
}
