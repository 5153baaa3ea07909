import type { ChatChoice, CompletionResponse, FinishReason, Usage } from '@gw/shared';
import { toolInput } from '../anthropic/chat-to-anthropic.ts';

/** OpenAI finish reasons as Converse stop reasons. */
export function converseStopReason(finish: FinishReason): string {
  if (finish === 'length') return 'max_tokens';
  if (finish === 'tool_calls') return 'tool_use';
  if (finish === 'content_filter') return 'content_filtered';
  return 'end_turn';
}

/** Usage as Converse counts it: cache reads and writes apart from `inputTokens`, and inside `totalTokens`. */
export function converseUsage(usage: Usage | undefined) {
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const written = usage?.prompt_tokens_details?.cache_write_tokens ?? 0;
  return {
    inputTokens: Math.max(0, (usage?.prompt_tokens ?? 0) - cached - written),
    outputTokens: usage?.completion_tokens ?? 0,
    totalTokens: usage?.total_tokens ?? 0,
    ...(cached > 0 && { cacheReadInputTokens: cached }),
    ...(written > 0 && { cacheWriteInputTokens: written }),
  };
}

/** A chat answer as a Converse answer: text, then one toolUse block per tool call. */
export function chatToConverse(completion: CompletionResponse) {
  const choice = completion.choices[0] as ChatChoice | undefined;
  const content: unknown[] = [];
  if (choice?.message.content) content.push({ text: choice.message.content });
  for (const call of choice?.message.tool_calls ?? []) {
    content.push({
      toolUse: { toolUseId: call.id, name: call.function.name, input: toolInput(call.function.arguments) },
    });
  }
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: converseStopReason(choice?.finish_reason ?? 'stop'),
    usage: converseUsage(completion.usage),
    metrics: { latencyMs: Math.round((completion.extra_fields?.latency ?? 0) * 1000) },
  };
}
