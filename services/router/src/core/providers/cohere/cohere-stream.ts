import type { ChatCompletionChunk, FinishReason, SseEvent } from '@gw/shared';
import type { z } from 'zod';
import { invalidUpstreamBody, parseEventJson } from '../upstream-call.ts';
import { cohereGenerationError, readCohereErrorMessage } from './cohere-error.ts';
import { cohereStreamEventSchemas } from './cohere-schemas.ts';
import { isCohereFailure, mapCohereFinishReason } from './map-cohere-finish-reason.ts';
import { mapCohereUsage } from './map-cohere-usage.ts';

type Delta = NonNullable<ChatCompletionChunk['choices'][number]['delta']>;
type EventType = keyof typeof cohereStreamEventSchemas;

/**
 * Turns Cohere's v2 chat events into OpenAI chunks, one chunk per event as it arrives:
 * message-start → role chunk; content-delta → content; tool-call-start → a tool call with its id and name;
 * tool-call-delta → argument fragments; message-end → finish chunk, then usage chunk. tool-plan-delta is
 * Cohere's narration of the calls it is about to make: like OpenAI, gw answers tool calls without content
 * (the plan stays in the provider's own events). content-end, tool-call-end and citations carry nothing gw
 * needs.
 */
export async function* translateCohereStream(
  events: AsyncIterable<SseEvent>,
  options: { provider: string; model: string },
): AsyncGenerator<ChatCompletionChunk> {
  const { provider, model } = options;
  const created = Math.floor(Date.now() / 1000);
  let id = '';
  let started = false;
  // Counted here rather than read from Cohere's `index`, which is not promised to count tool calls alone.
  let toolCallIndex = -1;

  const chunk = (delta: Delta, finishReason: FinishReason = null): ChatCompletionChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });

  function parse<Type extends EventType>(type: Type, payload: unknown) {
    const result = cohereStreamEventSchemas[type].safeParse(payload);
    if (!result.success)
      throw invalidUpstreamBody(provider, `stream carried a ${type} event of an unexpected shape`);
    return result.data as z.infer<(typeof cohereStreamEventSchemas)[Type]>;
  }

  for await (const event of events) {
    const payload = parseEventJson(provider, event.data);
    const named = (payload as { type?: unknown } | null)?.type;
    const type = typeof named === 'string' ? named : event.event;

    if (type === 'error') {
      throw cohereGenerationError({ provider, message: readCohereErrorMessage(payload), body: payload });
    }
    if (type === 'message-start') id = parse(type, payload).id ?? id;
    if (!started) {
      started = true;
      yield chunk({ role: 'assistant' });
    }

    switch (type) {
      case 'content-start':
      case 'content-delta': {
        // Reasoning models stream `thinking` instead of `text`; OpenAI chunks have no place for it.
        const text = parse(type, payload).delta.message.content.text;
        if (text) yield chunk({ content: text });
        break;
      }
      case 'tool-call-start': {
        const call = parse(type, payload).delta.message.tool_calls;
        toolCallIndex++;
        const index = toolCallIndex;
        yield chunk({
          tool_calls: [
            { index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } },
          ],
        });
        if (call.function.arguments) {
          yield chunk({ tool_calls: [{ index, function: { arguments: call.function.arguments } }] });
        }
        break;
      }
      case 'tool-call-delta': {
        const fragment = parse(type, payload).delta.message.tool_calls.function.arguments;
        if (fragment && toolCallIndex >= 0) {
          yield chunk({ tool_calls: [{ index: toolCallIndex, function: { arguments: fragment } }] });
        }
        break;
      }
      case 'message-end': {
        const end = parse(type, payload).delta;
        if (end.error || isCohereFailure(end.finish_reason)) {
          throw cohereGenerationError({
            provider,
            message: end.error ?? `${provider} ended the generation with ${end.finish_reason}`,
            body: payload,
          });
        }
        yield chunk({}, mapCohereFinishReason(end.finish_reason) ?? 'stop');
        yield {
          id,
          object: 'chat.completion.chunk',
          created,
          model,
          choices: [],
          usage: mapCohereUsage(end.usage),
        };
        return;
      }
    }
  }
  throw invalidUpstreamBody(provider, 'stream ended before message-end');
}
