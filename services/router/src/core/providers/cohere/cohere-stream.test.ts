import { type ChatCompletionChunk, GatewayError, type SseEvent } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { cohereTextStreamEvents, cohereToolStreamEvents } from '../../../testing/fixtures/cohere-fixtures.ts';
import { translateCohereStream } from './cohere-stream.ts';

async function* asEvents(payloads: unknown[], named = true): AsyncGenerator<SseEvent> {
  for (const payload of payloads) {
    const type = (payload as { type?: string }).type;
    yield { event: named ? type : undefined, data: JSON.stringify(payload) };
  }
}

async function translate(payloads: unknown[], named = true): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of translateCohereStream(asEvents(payloads, named), {
    provider: 'cohere',
    model: 'm',
  })) {
    chunks.push(chunk);
  }
  return chunks;
}

const deltas = (chunks: ChatCompletionChunk[]) => chunks.map((chunk) => chunk.choices[0]?.delta);

describe('translateCohereStream', () => {
  it('answers role, content pieces, finish and usage in order, with the message id', async () => {
    const chunks = await translate(cohereTextStreamEvents);
    expect(chunks.map((chunk) => chunk.id)).toEqual(Array(6).fill('321d178c-2c12-44d3-ae42-2f5510f6b1cc'));
    expect(deltas(chunks)).toEqual([
      { role: 'assistant' },
      { content: 'Hel' },
      { content: 'lo th' },
      { content: 'ére' },
      {},
      undefined,
    ]);
    expect(chunks[4]!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks[5]).toMatchObject({
      choices: [],
      usage: {
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        prompt_tokens_details: { cached_tokens: 2 },
      },
    });
  });

  it('reads the event type from the payload when the event line is absent', async () => {
    const chunks = await translate(cohereTextStreamEvents, false);
    expect(
      deltas(chunks)
        .map((delta) => delta?.content ?? '')
        .join(''),
    ).toBe('Hello thére');
  });

  it('streams a tool call: id and name first, then argument fragments; the plan is not content', async () => {
    const chunks = await translate(cohereToolStreamEvents);
    expect(deltas(chunks)).toEqual([
      { role: 'assistant' },
      {
        tool_calls: [
          {
            index: 0,
            id: 'get_weather_e8p4pn45zt0t',
            type: 'function',
            function: { name: 'get_weather', arguments: '' },
          },
        ],
      },
      { tool_calls: [{ index: 0, function: { arguments: '{"' } }] },
      { tool_calls: [{ index: 0, function: { arguments: 'city' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '": "' } }] },
      { tool_calls: [{ index: 0, function: { arguments: 'Paris"}' } }] },
      {},
      undefined,
    ]);
    expect(chunks[6]!.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('numbers several tool calls from 0 and sends arguments that come with the start', async () => {
    const start = (index: number, name: string, args: string) => ({
      type: 'tool-call-start',
      index,
      delta: {
        message: { tool_calls: { id: `${name}_1`, type: 'function', function: { name, arguments: args } } },
      },
    });
    const chunks = await translate([
      { type: 'message-start', id: 'x' },
      { type: 'content-start', index: 0, delta: { message: { content: { type: 'text', text: '' } } } },
      { type: 'content-delta', index: 0, delta: { message: { content: { text: 'Sure.' } } } },
      { type: 'content-end', index: 0 },
      start(1, 'a', '{}'),
      { type: 'tool-call-end', index: 1 },
      start(2, 'b', ''),
      {
        type: 'tool-call-delta',
        index: 2,
        delta: { message: { tool_calls: { function: { arguments: '{}' } } } },
      },
      { type: 'tool-call-end', index: 2 },
      {
        type: 'message-end',
        delta: { finish_reason: 'TOOL_CALL', usage: { tokens: { input_tokens: 1, output_tokens: 1 } } },
      },
    ]);
    const calls = deltas(chunks).flatMap((delta) => delta?.tool_calls ?? []);
    expect(calls).toEqual([
      { index: 0, id: 'a_1', type: 'function', function: { name: 'a', arguments: '' } },
      { index: 0, function: { arguments: '{}' } },
      { index: 1, id: 'b_1', type: 'function', function: { name: 'b', arguments: '' } },
      { index: 1, function: { arguments: '{}' } },
    ]);
  });

  it('skips the thinking of reasoning models', async () => {
    const chunks = await translate([
      { type: 'message-start', id: 'x' },
      {
        type: 'content-start',
        index: 0,
        delta: { message: { content: { type: 'thinking', thinking: '' } } },
      },
      { type: 'content-delta', index: 0, delta: { message: { content: { thinking: 'Hmm' } } } },
      { type: 'content-end', index: 0 },
      { type: 'content-delta', index: 1, delta: { message: { content: { text: 'Answer' } } } },
      {
        type: 'message-end',
        delta: {
          finish_reason: 'MAX_TOKENS',
          usage: { billed_units: { input_tokens: 1, output_tokens: 2 } },
        },
      },
    ]);
    expect(
      deltas(chunks)
        .map((delta) => delta?.content ?? '')
        .join(''),
    ).toBe('Answer');
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('length');
    expect(chunks.at(-1)!.usage).toEqual({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 });
  });

  it('rejects a message-end that reports an error, with its message', async () => {
    const failure = translate([
      { type: 'message-start', id: 'x' },
      { type: 'message-end', delta: { finish_reason: 'ERROR', error: 'internal model failure' } },
    ]);
    await expect(failure).rejects.toBeInstanceOf(GatewayError);
    await expect(failure).rejects.toMatchObject({
      status: 502,
      upstream: true,
      message: 'internal model failure',
    });
  });

  it('rejects a TIMEOUT finish', async () => {
    await expect(
      translate([
        { type: 'message-start', id: 'x' },
        { type: 'message-end', delta: { finish_reason: 'TIMEOUT' } },
      ]),
    ).rejects.toMatchObject({ status: 502, message: 'cohere ended the generation with TIMEOUT' });
  });

  it('rejects an error event', async () => {
    await expect(translate([{ type: 'error', message: 'overloaded' }])).rejects.toMatchObject({
      type: 'upstream_error',
      status: 502,
      message: 'overloaded',
    });
  });

  it('rejects a stream that ends before message-end', async () => {
    await expect(translate(cohereTextStreamEvents.slice(0, -1))).rejects.toMatchObject({
      status: 502,
      message: expect.stringContaining('before message-end'),
    });
  });

  it('rejects an event of an unexpected shape', async () => {
    await expect(translate([{ type: 'tool-call-start', delta: { message: {} } }])).rejects.toMatchObject({
      status: 502,
      message: expect.stringContaining('tool-call-start'),
    });
  });
});
