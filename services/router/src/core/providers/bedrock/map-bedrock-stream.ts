import type { ChatCompletionChunk, FinishReason } from '@gw/shared';
import type { z } from 'zod';
import { invalidUpstreamBody, parseEventJson } from '../upstream-call.ts';
import { bedrockStreamException } from './bedrock-error.ts';
import { type BedrockStreamEventType, bedrockStreamEventSchemas } from './bedrock-schemas.ts';
import { mapBedrockFinishReason } from './map-bedrock-finish-reason.ts';
import { mapBedrockUsage } from './map-bedrock-usage.ts';
import type { EventStreamFrame } from './read-event-stream.ts';

type Delta = NonNullable<ChatCompletionChunk['choices'][number]['delta']>;

const decoder = new TextDecoder();

function parseEvent<Type extends BedrockStreamEventType>(
  provider: string,
  type: Type,
  frame: EventStreamFrame,
): z.infer<(typeof bedrockStreamEventSchemas)[Type]> {
  const payload = parseEventJson(provider, decoder.decode(frame.body));
  const result = bedrockStreamEventSchemas[type].safeParse(payload);
  if (!result.success) throw invalidUpstreamBody(provider, `stream carried a malformed ${type} event`);
  return result.data as z.infer<(typeof bedrockStreamEventSchemas)[Type]>;
}

/** Exception and error frames end the stream with a GatewayError; other frames are events. */
function throwIfFailure(provider: string, frame: EventStreamFrame): void {
  const messageType = frame.headers[':message-type'];
  if (messageType === 'exception') {
    const text = decoder.decode(frame.body);
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {}
    throw bedrockStreamException({
      provider,
      exceptionType: frame.headers[':exception-type'] ?? 'unknownException',
      body,
    });
  }
  if (messageType === 'error') {
    throw bedrockStreamException({
      provider,
      exceptionType: frame.headers[':error-code'] ?? 'unknownError',
      body: { message: frame.headers[':error-message'] ?? '' },
    });
  }
}

/**
 * The frames of a ConverseStream answer as OpenAI chat.completion.chunk objects, one chunk per event as it
 * arrives. Bedrock names no completion id, so one is made up per stream. Tool calls are numbered by their
 * order among tool calls, not by content block index (a text block before them would shift the index
 * OpenAI clients use to assemble calls).
 */
export async function* mapBedrockStream(
  frames: AsyncIterable<EventStreamFrame>,
  options: { provider: string; model: string; id: string },
): AsyncGenerator<ChatCompletionChunk> {
  const { provider, model, id } = options;
  const created = Math.floor(Date.now() / 1000);
  /** Content block index → tool call ordinal. */
  const toolCallIndexes = new Map<number, number>();
  let started = false;

  const chunk = (delta: Delta, finishReason: FinishReason = null): ChatCompletionChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });
  // Clients expect the role first; Bedrock always opens with messageStart, but a stream that does not
  // still gets one.
  function* opening(): Generator<ChatCompletionChunk> {
    if (started) return;
    started = true;
    yield chunk({ role: 'assistant' });
  }

  for await (const frame of frames) {
    throwIfFailure(provider, frame);
    const type = frame.headers[':event-type'];
    switch (type) {
      case 'messageStart':
        parseEvent(provider, type, frame);
        yield* opening();
        break;
      case 'contentBlockStart': {
        const event = parseEvent(provider, type, frame);
        const toolUse = event.start.toolUse;
        if (!toolUse) break;
        yield* opening();
        const index = toolCallIndexes.size;
        toolCallIndexes.set(event.contentBlockIndex, index);
        yield chunk({
          tool_calls: [
            {
              index,
              id: toolUse.toolUseId,
              type: 'function',
              function: { name: toolUse.name, arguments: '' },
            },
          ],
        });
        break;
      }
      case 'contentBlockDelta': {
        const event = parseEvent(provider, type, frame);
        yield* opening();
        if (event.delta.text) yield chunk({ content: event.delta.text });
        const fragment = event.delta.toolUse?.input;
        const index = toolCallIndexes.get(event.contentBlockIndex);
        if (fragment && index !== undefined) {
          yield chunk({ tool_calls: [{ index, function: { arguments: fragment } }] });
        }
        // Reasoning deltas and block types gw does not map are left out of the OpenAI stream.
        break;
      }
      case 'messageStop': {
        const event = parseEvent(provider, type, frame);
        yield* opening();
        yield chunk({}, mapBedrockFinishReason(event.stopReason) ?? 'stop');
        break;
      }
      case 'metadata': {
        const event = parseEvent(provider, type, frame);
        yield* opening();
        yield {
          id,
          object: 'chat.completion.chunk',
          created,
          model,
          choices: [],
          usage: mapBedrockUsage(event.usage),
        };
        break;
      }
      // contentBlockStop carries nothing a chunk needs; event types Bedrock adds later are skipped.
      default:
        break;
    }
  }
}
