import {
  type ChatCompletionChunk,
  type CompletionResponse,
  chatCompletionChunkSchema,
  completionResponseSchema,
  isPlainObject,
  messageSchema,
  PASSTHROUGH_OPERATIONS,
  usageSchema,
} from '@gw/shared';
import { z } from 'zod';

/** What the router's gRPC server decodes, checked before the core sees it (a forged call gets 400). */
const targetSchema = z.object({
  provider: z.string(),
  model: z.string(),
  keyIds: z.array(z.string()).optional(),
  affinity: z.string().max(128).optional(),
});

const routeBase = {
  requestId: z.string().min(1),
  targets: z.array(targetSchema).min(1),
  params: z.record(z.string(), z.unknown()),
};

export const completionRouteSchema = z.discriminatedUnion('operation', [
  z.object({
    ...routeBase,
    operation: z.literal('chat'),
    messages: z.array(messageSchema),
    native: z
      .object({
        format: z.enum(['anthropic', 'openai-responses', 'gemini', 'converse']),
        body: z.record(z.string(), z.unknown()),
        headers: z.record(z.string(), z.string()),
        untranslatable: z.object({ message: z.string(), param: z.string() }).optional(),
      })
      .optional(),
  }),
  z.object({
    ...routeBase,
    operation: z.literal('text'),
    prompt: z.union([z.string(), z.array(z.string())]),
  }),
]);

export const embeddingsRouteSchema = z.object({
  ...routeBase,
  operation: z.literal('embeddings'),
  input: z.union([z.string(), z.array(z.string())]),
});

export const passthroughRequestSchema = z.object({
  requestId: z.string().min(1),
  operation: z.enum(PASSTHROUGH_OPERATIONS),
  target: targetSchema,
  method: z.string().min(1),
  path: z.string().startsWith('/'),
  headers: z.record(z.string(), z.string()),
  hasBody: z.boolean(),
});

/** A provider patch is a JSON object: any other JSON value would replace the whole config (RFC 7396). */
export const providerPatchSchema = z.record(z.string(), z.unknown());

export const passthroughHeadSchema = z.object({
  status: z.number().int(),
  headers: z.record(z.string(), z.union([z.string(), z.array(z.string())])),
});

// The router's answers as the ingress decodes them. The router built each one itself (from a provider's answer its
// adapter checked), so the ingress checks the frame it reads to write an answer (an object with its id, kind,
// model and a list of choice objects) instead of every member again at every answer and chunk, and the usage in
// full, since settlement charges it. A corrupt or forged message is still refused (internal_error).

function isUsage(value: unknown): boolean {
  return usageSchema.safeParse(value).success;
}

/** The frame shared by answers and chunks: id, kind among `kinds`, model, and choices that are objects. */
function hasFrame(value: unknown, kinds: ReadonlySet<unknown>): value is Record<string, unknown> {
  return (
    isPlainObject(value) &&
    typeof value['id'] === 'string' &&
    kinds.has(value['object']) &&
    typeof value['model'] === 'string' &&
    Array.isArray(value['choices']) &&
    value['choices'].every(isPlainObject)
  );
}

const COMPLETION_KINDS: ReadonlySet<unknown> = new Set(completionResponseSchema.shape.object.options);
const CHUNK_KINDS: ReadonlySet<unknown> = new Set(chatCompletionChunkSchema.shape.object.options);

export const completionReplySchema = z.custom<CompletionResponse>(
  (value) => hasFrame(value, COMPLETION_KINDS) && isUsage(value['usage']),
  { message: 'not a completion answer (id, object, model, choices and usage)' },
);

export const chunkReplySchema = z.custom<ChatCompletionChunk>(
  (value) =>
    hasFrame(value, CHUNK_KINDS) &&
    (value['usage'] === undefined || value['usage'] === null || isUsage(value['usage'])),
  { message: 'not a stream chunk (id, object, model, choices, and usage when present)' },
);
