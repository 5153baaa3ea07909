import { GatewayError, type SseEvent } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import type { NativePiece } from '../adapter.ts';
import { mapResponsesAnswer, relayResponsesStream, responseObjectSchema } from './map-openai-responses.ts';

const USAGE = {
  input_tokens: 100,
  input_tokens_details: { cached_tokens: 80 },
  output_tokens: 20,
  output_tokens_details: { reasoning_tokens: 12 },
  total_tokens: 120,
};

const event = (data: { type: string } & Record<string, unknown>): SseEvent => ({
  event: data.type,
  data: JSON.stringify(data),
});

async function relay(events: SseEvent[]): Promise<NativePiece[]> {
  const pieces: NativePiece[] = [];
  async function* source() {
    yield* events;
  }
  for await (const piece of relayResponsesStream(source(), { provider: 'openai', model: 'gpt-5' })) {
    pieces.push(piece);
  }
  return pieces;
}

describe('OpenAI Responses answers in chat terms', () => {
  it('reads text, function calls and usage (cached and reasoning tokens) of a whole answer', () => {
    const response = responseObjectSchema.parse({
      id: 'resp_1',
      created_at: 1,
      model: 'gpt-5',
      status: 'completed',
      output: [
        { type: 'reasoning', summary: [] },
        { type: 'message', content: [{ type: 'output_text', text: 'Hi' }] },
        { type: 'function_call', call_id: 'call_1', name: 'shell', arguments: '{"command":["ls"]}' },
      ],
      usage: USAGE,
    });
    expect(mapResponsesAnswer(response, { raw: {}, model: 'gpt-5' })).toMatchObject({
      id: 'resp_1',
      choices: [
        {
          message: {
            content: 'Hi',
            tool_calls: [{ id: 'call_1', function: { name: 'shell', arguments: '{"command":["ls"]}' } }],
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: {
        prompt_tokens: 100,
        completion_tokens: 20,
        total_tokens: 120,
        prompt_tokens_details: { cached_tokens: 80 },
        completion_tokens_details: { reasoning_tokens: 12 },
      },
    });
  });

  it('relays each event as it came, with text, calls and the final usage translated beside it', async () => {
    const events = [
      event({ type: 'response.created', response: { id: 'resp_2', model: 'gpt-5', output: [] } }),
      event({ type: 'response.output_text.delta', output_index: 0, delta: 'He' }),
      event({
        type: 'response.output_item.added',
        output_index: 1,
        item: { type: 'function_call', call_id: 'call_9', name: 'shell', arguments: '' },
      }),
      event({ type: 'response.function_call_arguments.delta', output_index: 1, delta: '{}' }),
      event({ type: 'response.an_event_gw_does_not_know' }),
      event({
        type: 'response.completed',
        response: { id: 'resp_2', status: 'completed', output: [], usage: USAGE },
      }),
    ];
    const pieces = await relay(events);
    expect(pieces.map((piece) => piece.native)).toEqual(
      events.map(({ event: name, data }) => `event: ${name}\ndata: ${data}\n\n`),
    );
    expect(pieces.map((piece) => piece.chunk.choices[0]?.delta)).toEqual([
      { role: 'assistant' },
      { content: 'He' },
      {
        tool_calls: [
          { index: 0, id: 'call_9', type: 'function', function: { name: 'shell', arguments: '' } },
        ],
      },
      { tool_calls: [{ index: 0, function: { arguments: '{}' } }] },
      undefined,
      {},
    ]);
    expect(pieces[5]!.chunk).toMatchObject({
      id: 'resp_2',
      choices: [{ finish_reason: 'tool_calls' }],
      usage: { prompt_tokens: 100, completion_tokens: 20, prompt_tokens_details: { cached_tokens: 80 } },
    });
  });

  it('fails a stream that fails, and one cut before response.completed', async () => {
    const failed = await relay([
      event({
        type: 'response.failed',
        response: { id: 'r', output: [], error: { code: 'server_error', message: 'boom' } },
      }),
    ]).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(GatewayError);
    expect(failed).toMatchObject({ type: 'upstream_error', message: 'boom', upstream: true });

    const cut = await relay([event({ type: 'response.output_text.delta', delta: 'x' })]).catch(
      (error: unknown) => error,
    );
    expect(cut).toMatchObject({ message: expect.stringContaining('before response.completed') });
  });
});
