import { randomUUID } from 'node:crypto';
import type { ChatChoice, TextChoice, ToolCall, Usage } from '@gw/shared';
import type { z } from 'zod';
import type { AdapterResult } from '../adapter.ts';
import { mapOpenAiFinishReason } from './map-openai-finish-reason.ts';
import { mapOpenAiUsage } from './map-openai-usage.ts';
import type {
  OpenAiUsage,
  openAiChatResponseSchema,
  openAiTextResponseSchema,
  openAiToolCallSchema,
} from './openai-schemas.ts';

interface MapAnswerOptions {
  raw: unknown;
  model: string;
  /** The provider's usage mapping (Mistral's); OpenAI's by default. */
  mapUsage?: (usage: OpenAiUsage | null | undefined) => Usage;
}

/** Arguments are a JSON string in gw; servers that send an object get it serialised. */
export function toolCallArguments(value: string | Record<string, unknown> | null | undefined): string {
  if (typeof value === 'string') return value;
  return value ? JSON.stringify(value) : '';
}

/** A fresh id for servers that leave tool calls unnamed; callers echo it back in the tool message. */
function generatedToolCallId(): string {
  return `call_${randomUUID().replaceAll('-', '').slice(0, 24)}`;
}

function mapToolCall(call: z.infer<typeof openAiToolCallSchema>): ToolCall {
  return {
    id: call.id || generatedToolCallId(),
    type: 'function',
    function: { name: call.function.name, arguments: toolCallArguments(call.function.arguments) || '{}' },
  };
}

export function mapOpenAiChatResponse(
  parsed: z.infer<typeof openAiChatResponseSchema>,
  options: MapAnswerOptions,
): AdapterResult<ChatChoice> {
  return {
    id: parsed.id,
    created: parsed.created,
    model: parsed.model || options.model,
    systemFingerprint: parsed.system_fingerprint,
    choices: parsed.choices.map((choice) => {
      const { tool_calls: toolCalls, ...message } = choice.message;
      return {
        ...choice,
        message: {
          ...(message as Omit<ChatChoice['message'], 'tool_calls'>),
          role: 'assistant',
          content: message.content ?? null,
          ...(toolCalls?.length ? { tool_calls: toolCalls.map(mapToolCall) } : {}),
        },
        finish_reason: mapOpenAiFinishReason(choice.finish_reason),
      };
    }),
    usage: (options.mapUsage ?? mapOpenAiUsage)(parsed.usage),
    raw: options.raw,
  };
}

export function mapOpenAiTextResponse(
  parsed: z.infer<typeof openAiTextResponseSchema>,
  options: MapAnswerOptions,
): AdapterResult<TextChoice> {
  return {
    id: parsed.id,
    created: parsed.created,
    model: parsed.model || options.model,
    choices: parsed.choices.map((choice) => ({
      index: choice.index,
      text: choice.text,
      finish_reason: mapOpenAiFinishReason(choice.finish_reason),
    })),
    usage: (options.mapUsage ?? mapOpenAiUsage)(parsed.usage),
    raw: options.raw,
  };
}
