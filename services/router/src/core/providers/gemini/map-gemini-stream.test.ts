import { type ChatCompletionChunk, GatewayError, type SseEvent } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { chatStreamToolEvents } from '../../../testing/fixtures/gemini-fixtures.ts';
import { mapGeminiStream } from './map-gemini-stream.ts';

/** The `data:` payloads of fixture events, as the shared SSE parser hands them over. */
function events(...payloads: Array<string | object>): AsyncIterable<SseEvent> {
  return (async function* () {
    for (const payload of payloads) {
      const data =
        typeof payload === 'string' ? payload.replace(/^data: /, '').trim() : JSON.stringify(payload);
      yield { event: undefined, data };
    }
  })();
}

async function collect(source: AsyncIterable<SseEvent>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of mapGeminiStream(source, { provider: 'gemini', model: 'gemini-x' }))
    chunks.push(chunk);
  return chunks;
}

describe('mapGeminiStream', () => {
  it('passes a whole function call on as an opening delta and an arguments delta', async () => {
    const chunks = await collect(events(...chatStreamToolEvents));
    const choices = chunks.map((chunk) => chunk.choices[0]);
    expect(choices[0]).toEqual({ index: 0, delta: { role: 'assistant' }, finish_reason: null });
    expect(choices[1]?.delta?.tool_calls).toEqual([
      {
        index: 0,
        id: expect.stringMatching(/^call_/),
        type: 'function',
        function: { name: 'get_weather', arguments: '' },
      },
    ]);
    expect(choices[2]?.delta?.tool_calls).toEqual([
      { index: 0, function: { arguments: '{"city":"Paris"}' } },
    ]);
    expect(choices[3]).toEqual({ index: 0, delta: {}, finish_reason: 'tool_calls' });
    expect(chunks[4]).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 },
    });
    expect(chunks).toHaveLength(5);
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({
        id: 'pCKfaMLFH-bGz7IPjN3s0Q4',
        object: 'chat.completion.chunk',
        model: 'gemini-2.5-flash',
      });
    }
  });

  it('numbers several function calls of one candidate', async () => {
    const call = (city: string) => ({ functionCall: { name: 'get_weather', args: { city } } });
    const chunks = await collect(
      events(
        { candidates: [{ index: 0, content: { role: 'model', parts: [call('Paris')] } }] },
        {
          candidates: [{ index: 0, content: { role: 'model', parts: [call('Rome')] }, finishReason: 'STOP' }],
        },
      ),
    );
    const openings = chunks
      .flatMap((chunk) => chunk.choices[0]?.delta?.tool_calls ?? [])
      .filter((call) => call.id);
    expect(openings.map((opening) => opening.index)).toEqual([0, 1]);
    expect(chunks.at(-1)?.choices[0]?.finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)?.usage).toBeUndefined();
  });

  it('keeps candidates apart by index', async () => {
    const chunks = await collect(
      events({
        candidates: [
          { index: 0, content: { role: 'model', parts: [{ text: 'A' }] }, finishReason: 'STOP' },
          { index: 1, content: { role: 'model', parts: [{ text: 'B' }] }, finishReason: 'MAX_TOKENS' },
        ],
      }),
    );
    const byIndex = (index: number) =>
      chunks.flatMap((chunk) => chunk.choices.filter((choice) => choice.index === index));
    expect(byIndex(0).map((choice) => [choice.delta, choice.finish_reason])).toEqual([
      [{ role: 'assistant' }, null],
      [{ content: 'A' }, null],
      [{}, 'stop'],
    ]);
    expect(byIndex(1).at(-1)?.finish_reason).toBe('length');
  });

  it('ends a blocked prompt with content_filter', async () => {
    const chunks = await collect(events({ promptFeedback: { blockReason: 'PROHIBITED_CONTENT' } }));
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason)).toEqual([null, 'content_filter']);
  });

  it('rejects with the status Google states in an error event', async () => {
    const failure = await collect(
      events(
        { candidates: [{ index: 0, content: { role: 'model', parts: [{ text: 'Hi' }] } }] },
        { error: { code: 503, message: 'The model is overloaded.', status: 'UNAVAILABLE' } },
      ),
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GatewayError);
    expect(failure).toMatchObject({
      status: 503,
      upstream: true,
      type: 'upstream_error',
      message: 'The model is overloaded.',
    });
  });

  it('rejects an event that is not JSON', async () => {
    await expect(collect(events('{not json'))).rejects.toMatchObject({ status: 502, upstream: true });
  });
});
