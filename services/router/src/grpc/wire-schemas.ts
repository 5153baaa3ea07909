import { messageSchema, PASSTHROUGH_OPERATIONS } from '@gw/shared';
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
