import type { EmbeddingsResult } from '@gw/router';
import { validate } from '@gw/shared';
import { z } from 'zod';
import type { ParsedCompletion, Target } from '../../request/parse-request.ts';

const embeddingsRequestSchema = z.looseObject({
  model: z.string().min(1),
  input: z.union([z.string(), z.array(z.string()).min(1)], {
    error: 'must be a string or an array of strings (token arrays are not supported)',
  }),
  encoding_format: z.enum(['float', 'base64']).optional(),
});

/** Members that are the request's envelope, not params for the provider. */
const ENVELOPE = new Set(['model', 'input', 'encoding_format']);

/**
 * An OpenAI embeddings request as gw's `embeddings` operation (any provider with embeddings can serve it).
 * `encoding_format` is gw's business: the provider always answers floats and gw encodes base64 when asked
 * (the OpenAI SDK asks for base64 by default).
 */
export function openAiToEmbeddings(
  body: unknown,
  target: (model: string) => Target,
): { parsed: ParsedCompletion; base64: boolean } {
  const request = validate(embeddingsRequestSchema, body);
  const params: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(request)) if (!ENVELOPE.has(name)) params[name] = value;
  return {
    parsed: {
      operation: 'embeddings',
      target: target(request.model),
      fallbacks: [],
      input: request.input,
      params,
      stream: false,
    },
    base64: request.encoding_format === 'base64',
  };
}

/** Float32 little-endian bytes in base64: what OpenAI sends for `encoding_format: base64`. */
function embeddingToBase64(values: number[]): string {
  const floats = new Float32Array(values);
  return Buffer.from(floats.buffer, floats.byteOffset, floats.byteLength).toString('base64');
}

/** The router's embeddings list, with base64 vectors when the caller asked for them. */
export function embeddingsToOpenAi(result: EmbeddingsResult, base64: boolean): string {
  if (!base64) return result.json ?? JSON.stringify(result.response);
  const data = result.response.data.map((item) =>
    Array.isArray(item.embedding) ? { ...item, embedding: embeddingToBase64(item.embedding) } : item,
  );
  return JSON.stringify({ ...result.response, data });
}
