import { type ChatCompletionChunk, frameSseEvent, type SseEvent } from '@gw/shared';
import { NativePiece } from './adapter.ts';

/**
 * A provider's stream relayed verbatim beside its chat translation, for a mapper that may make several chunks
 * of one event, or none: each chunk carries the events read since the one before (its own event first;
 * later chunks of the same event carry nothing more to write), and events after the last chunk end the
 * stream in a piece of their own.
 */
export async function* relayMappedStream<Event = SseEvent>(
  events: AsyncIterable<Event>,
  map: (events: AsyncIterable<Event>) => AsyncIterable<ChatCompletionChunk>,
  /** An event as the caller's surface relays it (SSE events framed again by default). */
  frame: (event: Event) => string = frameSseEvent as (event: Event) => string,
): AsyncGenerator<NativePiece> {
  let pending = '';
  async function* recorded(): AsyncGenerator<Event> {
    for await (const event of events) {
      pending += frame(event);
      yield event;
    }
  }
  let last: ChatCompletionChunk | undefined;
  for await (const chunk of map(recorded())) {
    const native = pending;
    pending = '';
    last = chunk;
    yield new NativePiece(chunk, native);
  }
  if (pending && last) {
    const { usage: _usage, ...said } = last;
    yield new NativePiece({ ...said, choices: [] }, pending);
  }
}
