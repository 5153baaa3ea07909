import { z } from 'zod';

/**
 * A prompt-cache breakpoint on a part (Anthropic's `cache_control`, as LiteLLM and OpenRouter carry it in
 * chat): providers that cache by marker get it in their terms (Anthropic's marker, Bedrock's `cachePoint`);
 * the others never see it.
 */
const cacheControlSchema = z.looseObject({ type: z.string() }).optional();

export const imageUrlPartSchema = z.object({
  type: z.literal('image_url'),
  image_url: z.object({ url: z.string().min(1), detail: z.string().optional() }),
  cache_control: cacheControlSchema,
});
export const textPartSchema = z.object({
  type: z.literal('text'),
  text: z.string(),
  cache_control: cacheControlSchema,
});
/** Text and image parts are typed; other part types (input_audio, file…) pass through to the provider. */
export const contentPartSchema = z.union([
  textPartSchema,
  imageUrlPartSchema,
  z.looseObject({ type: z.string().refine((type) => type !== 'text' && type !== 'image_url') }),
]);

export const toolCallSchema = z.object({
  type: z.literal('function').default('function'),
  id: z.string().min(1),
  function: z.object({ name: z.string().min(1), arguments: z.string().default('{}') }),
});

export const messageSchema = z.looseObject({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: z.union([z.string(), z.array(contentPartSchema), z.null()]).optional(),
  name: z.string().optional(),
  tool_calls: z.array(toolCallSchema).optional(),
  tool_call_id: z.string().optional(),
});

export const toolSchema = z.looseObject({
  type: z.literal('function'),
  function: z.looseObject({
    name: z.string().min(1),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});

const toolChoiceSchema = z.union([
  z.enum(['none', 'auto', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: z.string().min(1) }) }),
]);

/** The native `params` object; members gw does not know pass through to the provider. */
export const paramsSchema = z.looseObject({
  max_tokens: z.number().int().positive().optional(),
  max_completion_tokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().min(0).max(1).optional(),
  stop_sequences: z.array(z.string()).optional(),
  stop: z.union([z.string(), z.array(z.string())]).optional(),
  tools: z.array(toolSchema).optional(),
  tool_choice: toolChoiceSchema.optional(),
  response_format: z.record(z.string(), z.unknown()).optional(),
  n: z.number().int().positive().optional(),
  seed: z.number().int().optional(),
  user: z.string().optional(),
});

const targetSchema = z.string().min(1);

/**
 * ChatCompletionRequest: gw's native shape (`params`) and OpenAI's own top-level fields, so that OpenAI SDK
 * calls work unchanged. Top-level fields other than the ones named here are params too.
 */
export const chatRequestSchema = z.looseObject({
  model: targetSchema,
  messages: z.array(messageSchema).min(1),
  params: paramsSchema.optional(),
  fallbacks: z.array(targetSchema).optional(),
  stream: z.boolean().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).loose().optional(),
  provider: z.string().optional(),
});

export const textRequestSchema = z.looseObject({
  model: targetSchema,
  provider: z.string().optional(),
  /** The native shape; OpenAI's `prompt` is accepted too. */
  text: z.string().optional(),
  prompt: z.union([z.string(), z.array(z.string())]).optional(),
  params: paramsSchema.optional(),
  fallbacks: z.array(targetSchema).optional(),
  stream: z.boolean().optional(),
  stream_options: z.object({ include_usage: z.boolean().optional() }).loose().optional(),
});

export type ContentPart = z.infer<typeof contentPartSchema>;
export type ToolCall = z.infer<typeof toolCallSchema>;
export type Message = z.infer<typeof messageSchema>;
export type Tool = z.infer<typeof toolSchema>;
