import { type ChatCompletionChunk, type FinishReason, frameSseEvent, type SseEvent } from '@gw/shared';
import { NativePiece } from '../adapter.ts';
import { invalidUpstreamBody, parseEventJson } from '../upstream-call.ts';
import { anthropicStreamError } from './anthropic-error.ts';
import {
  type AnthropicStreamEvent,
  type AnthropicUsage,
  anthropicStreamEventSchema,
  isInputJsonDelta,
  isTextBlock,
  isTextDelta,
  isToolUseBlock,
} from './anthropic-schemas.ts';
import { mapAnthropicFinishReason } from './map-anthropic-finish-reason.ts';
import { mapAnthropicUsage } from './map-anthropic-usage.ts';

type Delta = NonNullable<ChatCompletionChunk['choices'][number]['delta']>;

const KNOWN_EVENT_TYPES = new Set([
  'message_start',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
  'message_delta',
  'message_stop',
  'ping',
  'error',
]);

function parseEvent(provider: string, event: SseEvent): AnthropicStreamEvent | undefined {
  const payload = parseEventJson(provider, event.data);
  const type = (payload as { type?: unknown } | null)?.type;
  // Event types Anthropic adds later are skipped, as its SDKs do.
  if (typeof type !== 'string' || !KNOWN_EVENT_TYPES.has(type)) return undefined;
  const result = anthropicStreamEventSchema.safeParse(payload);
  if (!result.success) throw invalidUpstreamBody(provider, `stream carried a malformed ${type} event`);
  return result.data;
}

/**
 * Translates the events of one Anthropic Messages stream, one at a time, into OpenAI chat.completion.chunk
 * objects (at most one per event). Tool calls are numbered by their order among tool calls, not by content
 * block index (a text block before them would shift the index OpenAI clients use to assemble calls).
 */
function anthropicStreamMapper(options: { provider: string; model: string }) {
  let id = '';
  let model = options.model;
  const created = Math.floor(Date.now() / 1000);
  const usage: AnthropicUsage = {};
  /** Content block index → tool call ordinal. */
  const toolCallIndexes = new Map<number, number>();
  let stopped = false;

  const chunk = (delta: Delta, finishReason: FinishReason = null): ChatCompletionChunk => ({
    id,
    object: 'chat.completion.chunk',
    created,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  });

  return {
    /** The chunk an event says, if any; an `error` event throws. */
    map(sseEvent: SseEvent): ChatCompletionChunk | undefined {
      const event = parseEvent(options.provider, sseEvent);
      if (!event) return undefined;
      switch (event.type) {
        case 'message_start':
          id = event.message.id;
          model = event.message.model || model;
          Object.assign(usage, event.message.usage);
          return chunk({ role: 'assistant' });
        case 'content_block_start': {
          const block = event.content_block;
          if (isTextBlock(block) && block.text) return chunk({ content: block.text });
          if (isToolUseBlock(block)) {
            const index = toolCallIndexes.size;
            toolCallIndexes.set(event.index, index);
            return chunk({
              tool_calls: [
                { index, id: block.id, type: 'function', function: { name: block.name, arguments: '' } },
              ],
            });
          }
          return undefined;
        }
        case 'content_block_delta': {
          const delta = event.delta;
          if (isTextDelta(delta) && delta.text) return chunk({ content: delta.text });
          if (delta.type === 'thinking_delta' && typeof delta['thinking'] === 'string' && delta['thinking']) {
            return chunk({ reasoning_content: delta['thinking'] });
          }
          const index = toolCallIndexes.get(event.index);
          if (isInputJsonDelta(delta) && delta.partial_json && index !== undefined) {
            return chunk({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] });
          }
          return undefined;
        }
        case 'message_delta':
          // message_delta's counts are cumulative, so they replace those of message_start.
          for (const [name, value] of Object.entries(event.usage ?? {})) {
            if (value !== null && value !== undefined) usage[name] = value;
          }
          return event.delta.stop_reason
            ? chunk({}, mapAnthropicFinishReason(event.delta.stop_reason))
            : undefined;
        case 'message_stop':
          stopped = true;
          return { ...chunk({}), choices: [], usage: mapAnthropicUsage(usage) };
        case 'error':
          throw anthropicStreamError(options.provider, event);
        default:
          // content_block_stop and ping carry nothing a chunk needs.
          return undefined;
      }
    },
    /** A chunk that says nothing, for an event relayed verbatim that chat has no words for. */
    empty(): ChatCompletionChunk {
      return { ...chunk({}), choices: [] };
    },
    /** At the end of the events: a stream cut before message_stop is an error, not a short answer. */
    end(): void {
      if (!stopped) throw invalidUpstreamBody(options.provider, 'stream ended before message_stop');
    },
  };
}

/** The events of an Anthropic Messages stream as OpenAI chat.completion.chunk objects, as they arrive. */
export async function* mapAnthropicStream(
  events: AsyncIterable<SseEvent>,
  options: { provider: string; model: string },
): AsyncGenerator<ChatCompletionChunk> {
  const mapper = anthropicStreamMapper(options);
  for await (const event of events) {
    const chunk = mapper.map(event);
    if (chunk) yield chunk;
  }
  mapper.end();
}

/**
 * The events of an Anthropic Messages stream relayed verbatim to a caller of the same format (thinking and
 * signature deltas, events gw does not know), each with its chat translation for usage and the stages.
 */
export async function* relayAnthropicStream(
  events: AsyncIterable<SseEvent>,
  options: { provider: string; model: string },
): AsyncGenerator<NativePiece> {
  const mapper = anthropicStreamMapper(options);
  for await (const event of events) {
    const chunk = mapper.map(event) ?? mapper.empty();
    yield new NativePiece(chunk, frameSseEvent(event));
  }
  mapper.end();
}
