import { GatewayError, type SseEvent } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { type AdapterContext, chunkOf, type StreamPiece, VerbatimChunk } from '../adapter.ts';
import { mapOpenAiStream } from './map-openai-stream.ts';
import { readOpenAiErrorMessage } from './openai-error.ts';

const context = { provider: 'sgl' } as AdapterContext;

/** The pieces of a stream of these events' texts; `schemaOnly`: every chunk read by the schema (as with a usage reader). */
async function pieces(texts: string[], schemaOnly = false): Promise<StreamPiece[]> {
  async function* events(): AsyncGenerator<SseEvent> {
    for (const data of texts) yield { event: undefined, data };
  }
  const read: StreamPiece[] = [];
  for await (const piece of mapOpenAiStream(events(), {
    context,
    object: 'chat.completion.chunk',
    readMessage: readOpenAiErrorMessage,
    ...(schemaOnly && { readChunkUsage: () => undefined }),
  })) {
    read.push(piece);
  }
  return read;
}

/** The chunks of a stream of these payloads. */
async function collect(payloads: unknown[], schemaOnly = false) {
  return (
    await pieces(
      payloads.map((payload) => JSON.stringify(payload)),
      schemaOnly,
    )
  ).map(chunkOf);
}

const content = {
  id: 'c1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'm',
  choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }],
};

describe('mapOpenAiStream', () => {
  it('turns an error event into an upstream GatewayError with the status the event states', async () => {
    const failure = collect([
      content,
      { object: 'error', message: 'context too long', type: 'BadRequestError', code: 400 },
    ]);
    await expect(failure).rejects.toBeInstanceOf(GatewayError);
    await expect(failure).rejects.toMatchObject({ status: 400, upstream: true, message: 'context too long' });
  });

  it('answers 502 for an error event that states no status', async () => {
    await expect(collect([content, { error: { message: 'overloaded' } }])).rejects.toMatchObject({
      status: 502,
      type: 'upstream_error',
      message: 'overloaded',
    });
  });

  it('ends without a usage chunk when the server reported none', async () => {
    const chunks = await collect([content]);
    expect(chunks).toHaveLength(1);
    expect(chunks[0]?.choices[0]?.delta).toEqual({ content: 'Hi' });
  });

  it('refuses a chunk of unexpected shape', async () => {
    await expect(collect([{ choices: 'none' }])).rejects.toMatchObject({ status: 502, upstream: true });
  });

  it('reads a plain chunk as the schema does (the same chunks, members and key order) unless it passes it on', async () => {
    const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) => ({
      id: 'c1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      ...extra,
      choices,
    });
    const payloads = [
      chunk([{ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }], {
        system_fingerprint: 'fp',
      }),
      chunk([{ delta: { content: 'a' }, index: 0, finish_reason: null, logprobs: null }]),
      chunk([{ finish_reason: 'function_call', index: 0, delta: {} }]),
      chunk([{ index: 0, delta: null, text: 'legacy', finish_reason: 'model_length' }]),
      chunk([{ index: 0, text: null, delta: { content: 'b', refusal: null } }]),
      chunk([
        { index: 1, logprobs: { content: [] }, delta: { reasoning_content: 'r' }, finish_reason: 'odd' },
      ]),
      chunk([
        {
          index: 0,
          delta: { tool_calls: [{ index: 0, id: 't', function: { name: 'f', arguments: '{}' } }] },
        },
      ]),
      chunk([], { usage: null }),
      chunk([], { usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }),
    ];
    // One payload at a time: each is either passed on as it came (its own chunk, below) or read as the schema reads it.
    let read = 0;
    for (const payload of payloads) {
      const passed = await pieces([JSON.stringify(payload)]);
      const schema = await collect([payload], true);
      if (passed[0] instanceof VerbatimChunk) {
        expect(passed).toHaveLength(1);
        expect(passed[0].chunk).toEqual(payload);
        continue;
      }
      read++;
      expect(JSON.stringify(passed)).toBe(JSON.stringify(schema));
    }
    // The first two and the usage chunk are what gw makes of them; the six others are translated.
    expect(read).toBe(6);
  });

  it("drops a choice's __proto__ member as the schema does, instead of making it the prototype", async () => {
    const choice = JSON.parse(
      '{"index":0,"__proto__":{"delta":{"content":"smuggled"}},"finish_reason":null}',
    );
    const [chunk] = await collect([{ ...content, choices: [choice] }]);
    expect(Object.getPrototypeOf(chunk?.choices[0])).toBe(Object.prototype);
    expect(chunk?.choices[0]?.delta).toBeUndefined();
  });

  it('refuses a plain-looking chunk whose choice the schema refuses', async () => {
    await expect(
      collect([{ ...content, choices: [{ index: 0, delta: { content: 'x' }, finish_reason: 7 }] }]),
    ).rejects.toMatchObject({ status: 502, upstream: true });
  });

  it('passes on an event that already is what gw makes of it as it came: its text, and its payload as the chunk', async () => {
    const sent = [
      '{ "id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "m", "system_fingerprint": "fp",' +
        ' "choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": null, "finish_reason": null}], "usage": null }',
      '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"Hé"},"finish_reason":null,"obfuscation":"x"}],"usage":null}',
      '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":null}',
      '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}',
    ];
    const read = await pieces([...sent, '[DONE]']);
    expect(read.every((piece) => piece instanceof VerbatimChunk)).toBe(true);
    expect(read.map((piece) => (piece as VerbatimChunk).json)).toEqual(sent);
    expect(read.map(chunkOf)).toEqual(sent.map((text) => JSON.parse(text)));
  });

  it('translates every event gw changes, and sends none of them as it came', async () => {
    const choice = { index: 0, delta: { content: 'x' }, finish_reason: null };
    const chunk = (changes: Record<string, unknown>, choices: unknown[] = [choice]) => ({
      ...content,
      choices,
      ...changes,
    });
    const changed = {
      'no id': chunk({ id: '' }),
      'no object': chunk({ object: undefined }),
      "another operation's object": chunk({ object: 'text_completion' }),
      'no created': chunk({ created: 0 }),
      'no model': chunk({ model: '' }),
      "usage on a choice's chunk (mistral's)": chunk({
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
      'a finish reason gw maps': chunk({}, [{ ...choice, finish_reason: 'function_call' }]),
      'no finish reason': chunk({}, [{ index: 0, delta: { content: 'x' } }]),
      'a null delta': chunk({}, [{ index: 0, delta: null, finish_reason: null }]),
      'a null text': chunk({}, [{ ...choice, text: null }]),
      'a tool call': chunk({}, [
        {
          index: 0,
          delta: {
            tool_calls: [{ index: 0, id: 't', type: 'function', function: { name: 'f', arguments: '' } }],
          },
          finish_reason: null,
        },
      ]),
    };
    for (const [what, payload] of Object.entries(changed)) {
      const read = await pieces([JSON.stringify(payload)]);
      expect(read.length, what).toBeGreaterThan(0);
      expect(
        read.some((piece) => piece instanceof VerbatimChunk),
        what,
      ).toBe(false);
    }
    // JSON over two `data:` lines: its text is not one line of an event.
    const split = await pieces([JSON.stringify(content, null, 1)]);
    expect(split.some((piece) => piece instanceof VerbatimChunk)).toBe(false);
    const smuggled = await pieces([
      '{"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"__proto__":{},"finish_reason":null}]}',
    ]);
    expect(smuggled.some((piece) => piece instanceof VerbatimChunk)).toBe(false);
  });

  it("sends gw's own usage chunk when gw's usage differs from the upstream's, or the usage did not come last", async () => {
    const usage = {
      prompt_tokens: 3,
      completion_tokens: 2,
      total_tokens: 5,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0, accepted_prediction_tokens: 0 },
    };
    const detailed = await pieces([
      JSON.stringify(content),
      JSON.stringify({ ...content, choices: [], usage }),
    ]);
    expect(detailed[1]).not.toBeInstanceOf(VerbatimChunk);
    expect(chunkOf(detailed[1]!).usage).toEqual({
      prompt_tokens: 3,
      completion_tokens: 2,
      total_tokens: 5,
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
    const plainUsage = { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 };
    const early = await pieces([
      JSON.stringify({ ...content, choices: [], usage: plainUsage }),
      JSON.stringify(content),
    ]);
    expect(early.map((piece) => piece instanceof VerbatimChunk)).toEqual([true, false]);
    expect(chunkOf(early[1]!)).toEqual({ ...content, choices: [], usage: plainUsage });
  });
});
