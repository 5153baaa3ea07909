import {
  type ChatChoice,
  type ChatCompletionChunk,
  type CompletionResponse,
  EMPTY_USAGE,
  type TextChoice,
  type ToolCall,
} from '@gw/shared';
import type { CachedAnswer } from './cache-entry.ts';

type Choice = ChatCompletionChunk['choices'][number];
type Delta = NonNullable<Choice['delta']>;

/** A stored answer as a whole response (a stored stream is assembled). */
export function answerAsResponse(answer: CachedAnswer, provider: string): CompletionResponse {
  return answer.kind === 'whole' ? answer.response : chunksToResponse(answer.chunks, provider);
}

/** A stored answer as the chunks to replay, in order (a stored whole answer is cut into a stream). */
export function answerAsChunks(answer: CachedAnswer): ChatCompletionChunk[] {
  return answer.kind === 'chunks' ? answer.chunks : responseToChunks(answer.response);
}

/**
 * A whole answer as the stream a provider would have sent: per choice a first chunk with everything the
 * message holds and a chunk with its finish reason, then a chunk with the usage (as with
 * `stream_options.include_usage`) and the response's extra fields.
 */
export function responseToChunks(response: CompletionResponse): ChatCompletionChunk[] {
  const text = response.object !== 'chat.completion';
  const frame = {
    id: response.id,
    object: text ? ('text_completion' as const) : ('chat.completion.chunk' as const),
    created: response.created,
    model: response.model,
    ...(response.system_fingerprint != null && { system_fingerprint: response.system_fingerprint }),
  };
  const chunks: ChatCompletionChunk[] = [];
  for (const choice of response.choices) {
    const { index, finish_reason } = choice;
    if (isTextChoice(choice)) {
      chunks.push({ ...frame, choices: [{ index, text: choice.text, finish_reason: null }] });
      chunks.push({ ...frame, choices: [{ index, text: '', finish_reason }] });
      continue;
    }
    chunks.push({ ...frame, choices: [{ index, delta: messageDelta(choice), finish_reason: null }] });
    chunks.push({ ...frame, choices: [{ index, delta: {}, finish_reason }] });
  }
  chunks.push({ ...frame, choices: [], usage: response.usage, extra_fields: response.extra_fields });
  return chunks;
}

function isTextChoice(choice: ChatChoice | TextChoice): choice is TextChoice {
  return !('message' in choice);
}

function messageDelta(choice: ChatChoice): Delta {
  const { role, content, tool_calls, refusal, ...extra } = choice.message;
  return {
    ...extra,
    role,
    content,
    ...(tool_calls && {
      tool_calls: tool_calls.map((call, index) => ({ index, ...call })),
    }),
    ...(refusal != null && { refusal }),
  };
}

interface ChoiceAccumulator {
  index: number;
  content: string | undefined;
  refusal: string | undefined;
  reasoning: string | undefined;
  text: string;
  toolCalls: Map<number, { id: string; name: string; arguments: string }>;
  finishReason: Choice['finish_reason'];
}

/**
 * The whole response a stream amounts to: contents, refusals and reasoning concatenated per choice, tool call
 * arguments concatenated per tool call index, the last finish reason and usage.
 */
export function chunksToResponse(
  chunks: readonly ChatCompletionChunk[],
  provider: string,
): CompletionResponse {
  const first = chunks[0];
  if (first === undefined) throw new Error('a stream without chunks has no answer');
  const choices = new Map<number, ChoiceAccumulator>();
  let usage = EMPTY_USAGE;
  let extraFields: Record<string, unknown> = {};
  let fingerprint: unknown;
  for (const chunk of chunks) {
    if (chunk.usage) usage = chunk.usage;
    if (chunk.extra_fields) extraFields = { ...extraFields, ...chunk.extra_fields };
    fingerprint = chunk['system_fingerprint'] ?? fingerprint;
    for (const choice of chunk.choices) accumulate(choiceOf(choices, choice.index), choice);
  }
  const text = first.object === 'text_completion';
  const ordered = [...choices.values()].sort((left, right) => left.index - right.index);
  return {
    id: first.id,
    object: text ? 'text_completion' : 'chat.completion',
    created: first.created,
    model: first.model,
    choices: text ? ordered.map(textChoice) : ordered.map(chatChoice),
    usage,
    ...(typeof fingerprint === 'string' && { system_fingerprint: fingerprint }),
    extra_fields: { model_params: {}, latency: 0, ...extraFields, provider },
  };
}

function choiceOf(choices: Map<number, ChoiceAccumulator>, index: number): ChoiceAccumulator {
  let choice = choices.get(index);
  if (choice === undefined) {
    choice = {
      index,
      content: undefined,
      refusal: undefined,
      reasoning: undefined,
      text: '',
      toolCalls: new Map(),
      finishReason: null,
    };
    choices.set(index, choice);
  }
  return choice;
}

function accumulate(into: ChoiceAccumulator, choice: Choice): void {
  if (choice.finish_reason !== null) into.finishReason = choice.finish_reason;
  if (choice.text !== undefined) into.text += choice.text;
  const delta = choice.delta;
  if (delta === undefined) return;
  if (typeof delta.content === 'string') into.content = (into.content ?? '') + delta.content;
  if (typeof delta.refusal === 'string') into.refusal = (into.refusal ?? '') + delta.refusal;
  const reasoning = delta['reasoning_content'];
  if (typeof reasoning === 'string') into.reasoning = (into.reasoning ?? '') + reasoning;
  for (const call of delta.tool_calls ?? []) {
    const known = into.toolCalls.get(call.index);
    if (known === undefined) {
      into.toolCalls.set(call.index, {
        id: call.id ?? '',
        name: call.function?.name ?? '',
        arguments: call.function?.arguments ?? '',
      });
      continue;
    }
    if (call.id) known.id = call.id;
    if (call.function?.name) known.name += call.function.name;
    known.arguments += call.function?.arguments ?? '';
  }
}

function chatChoice(choice: ChoiceAccumulator): ChatChoice {
  const toolCalls: ToolCall[] = [...choice.toolCalls.entries()]
    .sort(([left], [right]) => left - right)
    .map(([, call]) => ({
      type: 'function',
      id: call.id,
      function: { name: call.name, arguments: call.arguments },
    }));
  return {
    index: choice.index,
    message: {
      role: 'assistant',
      content: choice.content ?? null,
      ...(toolCalls.length > 0 && { tool_calls: toolCalls }),
      ...(choice.refusal !== undefined && { refusal: choice.refusal }),
      ...(choice.reasoning !== undefined && { reasoning_content: choice.reasoning }),
    },
    finish_reason: choice.finishReason,
  };
}

function textChoice(choice: ChoiceAccumulator): TextChoice {
  return { index: choice.index, text: choice.text, finish_reason: choice.finishReason };
}
