import type { ChatChoice, CompletionResponse, FinishReason, Usage } from '@gw/shared';

/** OpenAI finish reasons as Anthropic stop reasons. */
export function anthropicStopReason(finish: FinishReason): string {
  if (finish === 'length') return 'max_tokens';
  if (finish === 'tool_calls') return 'tool_use';
  if (finish === 'content_filter') return 'refusal';
  return 'end_turn';
}

/** Usage as Anthropic counts it: cache reads and writes are not part of `input_tokens`. */
export function anthropicUsage(usage: Usage | undefined) {
  const cached = usage?.prompt_tokens_details?.cached_tokens ?? 0;
  const written = usage?.prompt_tokens_details?.cache_write_tokens ?? 0;
  return {
    input_tokens: Math.max(0, (usage?.prompt_tokens ?? 0) - cached - written),
    output_tokens: usage?.completion_tokens ?? 0,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: cached,
  };
}

/** A tool call's arguments as the `input` object Anthropic answers (an object even when they are broken). */
export function toolInput(argumentsText: string): unknown {
  try {
    const parsed = JSON.parse(argumentsText || '{}') as unknown;
    return typeof parsed === 'object' && parsed !== null ? parsed : {};
  } catch {
    return {};
  }
}

/** A chat answer as an Anthropic message: text first, then one tool_use block per tool call. */
export function chatToAnthropic(completion: CompletionResponse, requestId: string) {
  const choice = completion.choices[0] as ChatChoice | undefined;
  const content: unknown[] = [];
  if (choice?.message.content) content.push({ type: 'text', text: choice.message.content });
  for (const call of choice?.message.tool_calls ?? []) {
    content.push({
      type: 'tool_use',
      id: call.id,
      name: call.function.name,
      input: toolInput(call.function.arguments),
    });
  }
  return {
    id: completion.id.startsWith('msg_') ? completion.id : `msg_${requestId}`,
    type: 'message',
    role: 'assistant',
    model: completion.model,
    content,
    stop_reason: anthropicStopReason(choice?.finish_reason ?? 'stop'),
    stop_sequence: null,
    usage: anthropicUsage(completion.usage),
  };
}
