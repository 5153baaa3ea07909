import { z } from 'zod';

/** The minimal shape gw relies on in Anthropic answers; everything else passes through untouched. */
export const anthropicUsageSchema = z.looseObject({
  input_tokens: z.number().nullish(),
  output_tokens: z.number().nullish(),
  cache_read_input_tokens: z.number().nullish(),
  cache_creation_input_tokens: z.number().nullish(),
  /** The cache writes by how long they last (billed apart: an hour's at a higher price). */
  cache_creation: z.looseObject({ ephemeral_1h_input_tokens: z.number().nullish() }).nullish(),
});

export const textBlockSchema = z.looseObject({ type: z.literal('text'), text: z.string() });
export const toolUseBlockSchema = z.looseObject({
  type: z.literal('tool_use'),
  id: z.string(),
  name: z.string(),
  input: z.unknown(),
});
/** Thinking, server tool and future block types are kept in `raw` only. */
const otherBlockSchema = z.looseObject({
  type: z.string().refine((type) => type !== 'text' && type !== 'tool_use'),
});
const anthropicContentBlockSchema = z.union([textBlockSchema, toolUseBlockSchema, otherBlockSchema]);

const textDeltaSchema = z.looseObject({ type: z.literal('text_delta'), text: z.string() });
const inputJsonDeltaSchema = z.looseObject({ type: z.literal('input_json_delta'), partial_json: z.string() });
/** Thinking and signature deltas carry nothing gw forwards. */
const otherDeltaSchema = z.looseObject({
  type: z.string().refine((type) => type !== 'text_delta' && type !== 'input_json_delta'),
});

export const anthropicMessageSchema = z.looseObject({
  id: z.string().default(''),
  model: z.string().default(''),
  content: z.array(anthropicContentBlockSchema).default([]),
  stop_reason: z.string().nullish(),
  usage: anthropicUsageSchema.nullish(),
});

/** `{ type: 'error', error: { type, message } }`: an error answer, and the payload of a stream's error event. */
const anthropicErrorSchema = z.looseObject({
  type: z.literal('error'),
  error: z.looseObject({ type: z.string().default('api_error'), message: z.string().optional() }),
});

/** The events of a Messages stream, by their `type`; unknown event types are ignored by the mapper. */
export const anthropicStreamEventSchema = z.union([
  z.looseObject({
    type: z.literal('message_start'),
    message: z.looseObject({
      id: z.string().default(''),
      model: z.string().default(''),
      usage: anthropicUsageSchema.nullish(),
    }),
  }),
  z.looseObject({
    type: z.literal('content_block_start'),
    index: z.number(),
    content_block: anthropicContentBlockSchema,
  }),
  z.looseObject({
    type: z.literal('content_block_delta'),
    index: z.number(),
    delta: z.union([textDeltaSchema, inputJsonDeltaSchema, otherDeltaSchema]),
  }),
  z.looseObject({ type: z.literal('content_block_stop'), index: z.number() }),
  z.looseObject({
    type: z.literal('message_delta'),
    delta: z.looseObject({ stop_reason: z.string().nullish() }),
    usage: anthropicUsageSchema.nullish(),
  }),
  z.looseObject({ type: z.literal('message_stop') }),
  z.looseObject({ type: z.literal('ping') }),
  anthropicErrorSchema,
]);

export type AnthropicUsage = z.infer<typeof anthropicUsageSchema>;
export type AnthropicMessage = z.infer<typeof anthropicMessageSchema>;
export type AnthropicStreamEvent = z.infer<typeof anthropicStreamEventSchema>;
export type AnthropicTextBlock = z.infer<typeof textBlockSchema>;
export type AnthropicToolUseBlock = z.infer<typeof toolUseBlockSchema>;

/*
 * The schemas above admit any other block or delta type, so a `type` check alone does not narrow the
 * TypeScript union; these guards do, and are sound because parsing rejected a malformed text or tool_use.
 */
export function isTextBlock(block: { type: string }): block is AnthropicTextBlock {
  return block.type === 'text';
}

export function isToolUseBlock(block: { type: string }): block is AnthropicToolUseBlock {
  return block.type === 'tool_use';
}

export function isTextDelta(delta: { type: string }): delta is z.infer<typeof textDeltaSchema> {
  return delta.type === 'text_delta';
}

export function isInputJsonDelta(delta: { type: string }): delta is z.infer<typeof inputJsonDeltaSchema> {
  return delta.type === 'input_json_delta';
}
