import type { ChatCompletionChunk, SseEvent } from '@gw/shared';
import { expect, it } from 'vitest';
import type { NativePiece } from './adapter.ts';
import { relayMappedStream } from './native-relay.ts';

const chunk = (content: string, usage?: ChatCompletionChunk['usage']): ChatCompletionChunk => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta: { content }, finish_reason: null }],
  ...(usage ? { usage } : {}),
});

it('relays every event once, beside the chunks made of it, and the events after the last chunk at the end', async () => {
  const events: SseEvent[] = [
    { event: undefined, data: '{"n":1}' },
    { event: 'ping', data: '{}' },
    { event: undefined, data: '{"n":2}' },
    { event: undefined, data: '{"n":3}' },
  ];
  // Two chunks of event 1, none of the ping, one of event 2 (with usage), none of event 3.
  async function* map(read: AsyncIterable<SseEvent>) {
    for await (const event of read) {
      if (event.data === '{"n":1}') {
        yield chunk('a');
        yield chunk('b');
      } else if (event.data === '{"n":2}') {
        yield chunk('c', { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
      }
    }
  }
  async function* source() {
    yield* events;
  }
  const pieces: NativePiece[] = [];
  for await (const piece of relayMappedStream(source(), map)) pieces.push(piece);
  expect(pieces.map((piece) => piece.native)).toEqual([
    'data: {"n":1}\n\n',
    '',
    'event: ping\ndata: {}\n\n' + 'data: {"n":2}\n\n',
    'data: {"n":3}\n\n',
  ]);
  expect(pieces.map((piece) => piece.chunk.choices.length)).toEqual([1, 1, 1, 0]);
  // The closing piece says nothing more: the usage is counted once.
  expect(pieces[3]!.chunk.usage).toBeUndefined();
});
