import type { ChatChoice, CompletionResponse, FinishReason, Usage } from '@gw/shared';
import { toolInput } from '../anthropic/chat-to-anthropic.ts';

/** OpenAI finish reasons as Gemini's (a function call ends with STOP there). */
export function genAiFinishReason(finish: FinishReason): string {
  if (finish === 'length') return 'MAX_TOKENS';
  if (finish === 'content_filter') return 'SAFETY';
  return 'STOP';
}

export function genAiUsage(usage: Usage | undefined) {
  const cached = usage?.prompt_tokens_details?.cached_tokens;
  return {
    promptTokenCount: usage?.prompt_tokens ?? 0,
    candidatesTokenCount: usage?.completion_tokens ?? 0,
    totalTokenCount: usage?.total_tokens ?? 0,
    ...(cached ? { cachedContentTokenCount: cached } : {}),
  };
}

export function functionCallPart(call: { id: string; name: string; arguments: string }) {
  return { functionCall: { id: call.id, name: call.name, args: toolInput(call.arguments) } };
}

/** A chat answer as a GenerateContentResponse: text, then one functionCall part per tool call. */
export function chatToGenAi(completion: CompletionResponse, requestId: string) {
  const choice = completion.choices[0] as ChatChoice | undefined;
  const parts: unknown[] = [];
  if (choice?.message.content) parts.push({ text: choice.message.content });
  for (const call of choice?.message.tool_calls ?? []) {
    parts.push(
      functionCallPart({ id: call.id, name: call.function.name, arguments: call.function.arguments }),
    );
  }
  return {
    candidates: [
      {
        content: { role: 'model', parts },
        finishReason: genAiFinishReason(choice?.finish_reason ?? 'stop'),
        index: 0,
      },
    ],
    usageMetadata: genAiUsage(completion.usage),
    modelVersion: completion.model,
    responseId: requestId,
  };
}
