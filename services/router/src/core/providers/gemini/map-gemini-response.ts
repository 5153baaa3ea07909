import { type ChatChoice, newId, type ToolCall } from '@gw/shared';
import type { AdapterResult } from '../adapter.ts';
import type { GeminiCandidate, GeminiResponse } from './gemini-schemas.ts';
import { mapGeminiFinishReason } from './map-gemini-finish-reason.ts';
import { mapGeminiUsage } from './map-gemini-usage.ts';

type GeminiParts = NonNullable<GeminiCandidate['content']>['parts'];

/** The answer text of a candidate; thought summaries are left out. Undefined when there is no text part. */
export function answerText(parts: GeminiParts): string | undefined {
  const texts = parts.filter((part) => part.text !== undefined && !part.thought).map((part) => part.text);
  return texts.length > 0 ? texts.join('') : undefined;
}

/** A candidate's thought summaries (`thought: true` parts), as chat's `reasoning_content`. */
export function thoughtText(parts: GeminiParts): string | undefined {
  const texts = parts.filter((part) => part.text !== undefined && part.thought).map((part) => part.text);
  return texts.length > 0 ? texts.join('') : undefined;
}

/**
 * The function calls of a candidate as OpenAI tool calls. Gemini gives calls no id, so gw makes one up;
 * the later tool message finds the function name again through it.
 */
export function toolCallsOf(parts: GeminiParts): ToolCall[] {
  return parts.flatMap((part) =>
    part.functionCall
      ? [
          {
            id: newId('call'),
            type: 'function' as const,
            function: {
              name: part.functionCall.name,
              arguments: JSON.stringify(part.functionCall.args ?? {}),
            },
          },
        ]
      : [],
  );
}

function choiceOf(candidate: GeminiCandidate, position: number): ChatChoice {
  const parts = candidate.content?.parts ?? [];
  const toolCalls = toolCallsOf(parts);
  const thoughts = thoughtText(parts);
  return {
    index: candidate.index ?? position,
    message: {
      role: 'assistant',
      content: answerText(parts) ?? null,
      ...(thoughts ? { reasoning_content: thoughts } : {}),
      ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}),
    },
    finish_reason: mapGeminiFinishReason(candidate.finishReason, toolCalls.length > 0),
  };
}

/** A GenerateContentResponse as a normalised chat answer. */
export function mapGeminiResponse(
  response: GeminiResponse,
  options: { raw: unknown; model: string },
): AdapterResult<ChatChoice> {
  const choices = response.candidates.map(choiceOf).sort((left, right) => left.index - right.index);
  // A prompt blocked before generation comes back with no candidates, only promptFeedback.blockReason.
  if (choices.length === 0 && response.promptFeedback?.blockReason) {
    choices.push({
      index: 0,
      message: { role: 'assistant', content: null },
      finish_reason: 'content_filter',
    });
  }
  return {
    id: response.responseId ?? newId('chatcmpl'),
    created: Math.floor(Date.now() / 1000),
    model: response.modelVersion ?? options.model,
    choices,
    usage: mapGeminiUsage(response.usageMetadata),
    raw: options.raw,
  };
}
