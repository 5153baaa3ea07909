import { type ChatCompletionChunk, GatewayError, type SseEvent } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import {
  chatStreamEvents,
  chatStreamToolEvents,
  sseEvent,
} from '../../../testing/fixtures/anthropic-fixtures.ts';
import { mapAnthropicStream } from './map-anthropic-stream.ts';

/** The fixtures' framed events as the shared SSE parser yields them. */
function parsed(framed: string[]): SseEvent[] {
  return framed.map((text) => {
    const [eventLine, dataLine] = text.trim().split('\n');
    return { event: eventLine!.slice('event: '.length), data: dataLine!.slice('data: '.length) };
  });
}

async function* from(events: SseEvent[]): AsyncGenerator<SseEvent> {
  yield* events;
}

async function run(framed: string[]): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of mapAnthropicStream(from(parsed(framed)), {
    provider: 'anthropic',
    model: 'claude',
  })) {
    chunks.push(chunk);
  }
  return chunks;
}

async function failure(framed: string[]): Promise<GatewayError> {
  const error = await run(framed).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(GatewayError);
  return error as GatewayError;
}

describe('mapAnthropicStream', () => {
  it('maps a text stream to role, content, finish and usage chunks in order', async () => {
    const chunks = await run(chatStreamEvents);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta ?? chunk.usage)).toEqual([
      { role: 'assistant' },
      { content: 'Hel' },
      { content: 'lo th' },
      { content: 'ére' },
      {},
      {
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      },
    ]);
    expect(chunks[4]!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.at(-1)!.choices).toEqual([]);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({
        id: 'msg_014p7gG3wDgGV9EUtLvnow3U',
        object: 'chat.completion.chunk',
        model: 'claude-sonnet-4-5-20250929',
      });
    }
  });

  it('numbers tool calls by their order among tool calls, not by content block', async () => {
    const chunks = await run(chatStreamToolEvents);
    const toolDeltas = chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []);
    expect(toolDeltas).toEqual([
      {
        index: 0,
        id: 'toolu_01T1x1fJ34qAmk2tNTrN7Up6',
        type: 'function',
        function: { name: 'get_weather', arguments: '' },
      },
      { index: 0, function: { arguments: '{"city": ' } },
      { index: 0, function: { arguments: '"Paris"}' } },
    ]);
    expect(chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason))).toContain(
      'tool_calls',
    );
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 8 });
  });

  it('gives a second tool call the index 1', async () => {
    const toolStart = (index: number, id: string) =>
      sseEvent({
        type: 'content_block_start',
        index,
        content_block: { type: 'tool_use', id, name: 'f', input: {} },
      });
    const chunks = await run([
      chatStreamEvents[0]!,
      toolStart(0, 'toolu_a'),
      toolStart(1, 'toolu_b'),
      sseEvent({
        type: 'content_block_delta',
        index: 1,
        delta: { type: 'input_json_delta', partial_json: '{}' },
      }),
      sseEvent({ type: 'message_stop' }),
    ]);
    const toolDeltas = chunks.flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? []);
    expect(toolDeltas.map((delta) => [delta.index, delta.id])).toEqual([
      [0, 'toolu_a'],
      [1, 'toolu_b'],
      [1, undefined],
    ]);
  });

  it('says thinking deltas as reasoning_content, and skips signatures and event types it does not know', async () => {
    const chunks = await run([
      chatStreamEvents[0]!,
      sseEvent({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '' } }),
      sseEvent({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm' } }),
      sseEvent({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'x' } }),
      sseEvent({ type: 'a_future_event', detail: 1 }),
      sseEvent({ type: 'message_stop' }),
    ]);
    expect(chunks).toHaveLength(3);
    expect(chunks[1]!.choices[0]!.delta).toEqual({ reasoning_content: 'Hmm' });
  });

  it('turns an error event into a GatewayError; overloaded is 529 so the router retries it', async () => {
    const error = await failure([
      chatStreamEvents[0]!,
      sseEvent({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }),
    ]);
    expect(error).toMatchObject({
      type: 'upstream_error',
      status: 529,
      message: 'Overloaded',
      upstream: true,
    });
  });

  it('fails a stream that ends before message_stop', async () => {
    const error = await failure(chatStreamEvents.slice(0, 4));
    expect(error.message).toContain('ended before message_stop');
  });

  it('fails on a malformed known event', async () => {
    const error = await failure([chatStreamEvents[0]!, sseEvent({ type: 'content_block_delta', delta: {} })]);
    expect(error.message).toContain('malformed content_block_delta');
  });
});
