import { GatewayError, type SseEvent } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import type { AdapterContext } from '../adapter.ts';
import { mapOpenAiStream } from './map-openai-stream.ts';
import { readOpenAiErrorMessage } from './openai-error.ts';

const context = { provider: 'sgl' } as AdapterContext;

async function collect(payloads: unknown[]) {
  async function* events(): AsyncGenerator<SseEvent> {
    for (const payload of payloads) yield { event: undefined, data: JSON.stringify(payload) };
  }
  const chunks = [];
  for await (const chunk of mapOpenAiStream(events(), {
    context,
    object: 'chat.completion.chunk',
    readMessage: readOpenAiErrorMessage,
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
});
