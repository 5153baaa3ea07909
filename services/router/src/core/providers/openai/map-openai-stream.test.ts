import { GatewayError, type SseEvent } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import type { AdapterContext } from '../adapter.ts';
import { mapOpenAiStream } from './map-openai-stream.ts';
import { readOpenAiErrorMessage } from './openai-error.ts';

const context = { provider: 'sgl' } as AdapterContext;

/** `schemaOnly`: every chunk read by the schema (a usage reader sends chunks that way), none by the plain path. */
async function collect(payloads: unknown[], schemaOnly = false) {
  async function* events(): AsyncGenerator<SseEvent> {
    for (const payload of payloads) yield { event: undefined, data: JSON.stringify(payload) };
  }
  const chunks = [];
  for await (const chunk of mapOpenAiStream(events(), {
    context,
    object: 'chat.completion.chunk',
    readMessage: readOpenAiErrorMessage,
    ...(schemaOnly && { readChunkUsage: () => undefined }),
  })) {
    chunks.push(chunk);
  }
  return chunks;
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

  it('reads a plain chunk as the schema does: the same chunks, members and key order', async () => {
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
    const plain = await collect(payloads);
    const schema = await collect(payloads, true);
    expect(plain.length).toBeGreaterThan(payloads.length - 2);
    expect(JSON.stringify(plain)).toBe(JSON.stringify(schema));
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
});
