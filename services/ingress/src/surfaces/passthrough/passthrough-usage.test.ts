import { brotliCompressSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { createUsageSniffer } from './passthrough-usage.ts';

const CHAT = { operation: 'completions', method: 'POST', promptTokens: 12 } as const;

/** What the sniffer charges for an answer relayed in the given pieces. */
async function charged(
  headers: Record<string, string>,
  pieces: (string | Buffer)[],
  call: Parameters<typeof createUsageSniffer>[1] = CHAT,
  status = 200,
) {
  const sniffer = createUsageSniffer({ status, headers }, call);
  for (const piece of pieces) sniffer.push(typeof piece === 'string' ? Buffer.from(piece) : piece);
  return sniffer.finish();
}

function split(bytes: Buffer, size: number): Buffer[] {
  const pieces: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) pieces.push(bytes.subarray(at, at + size));
  return pieces;
}

const sse = (events: unknown[]) => events.map((event) => `data: ${JSON.stringify(event)}\n\n`).join('');
const JSON_TYPE = { 'content-type': 'application/json' };
const SSE_TYPE = { 'content-type': 'text/event-stream' };

describe('pass-through usage', () => {
  it('reads OpenAI usage from a JSON answer and from a stream’s last event', async () => {
    const answer = JSON.stringify({ usage: { prompt_tokens: 10, completion_tokens: 30, total_tokens: 40 } });
    expect(await charged(JSON_TYPE, [answer.slice(0, 9), answer.slice(9)])).toEqual({
      prompt_tokens: 10,
      completion_tokens: 30,
      total_tokens: 40,
    });
    const stream = sse([
      { choices: [{ delta: { content: 'Hi' } }] },
      { choices: [], usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 } },
    ]);
    expect(await charged(SSE_TYPE, split(Buffer.from(stream), 7))).toMatchObject({ total_tokens: 12 });
  });

  it('decodes a copy of a compressed answer (gzip JSON, brotli stream) to find its usage', async () => {
    const answer = gzipSync(JSON.stringify({ usage: { input_tokens: 20, output_tokens: 4 } }));
    expect(await charged({ ...JSON_TYPE, 'content-encoding': 'gzip' }, split(answer, 5))).toEqual({
      prompt_tokens: 20,
      completion_tokens: 4,
      total_tokens: 24,
    });
    const stream = brotliCompressSync(
      sse([{ type: 'response.completed', response: { usage: { input_tokens: 3, output_tokens: 9 } } }]),
    );
    expect(await charged({ ...SSE_TYPE, 'content-encoding': 'br' }, split(stream, 3))).toMatchObject({
      total_tokens: 12,
    });
  });

  it('reads Gemini, Anthropic, Cohere, Bedrock and Ollama shapes, keeping the largest running totals', async () => {
    const gemini = [
      { candidates: [], usageMetadata: { promptTokenCount: 8, candidatesTokenCount: 1 } },
      {
        candidates: [],
        usageMetadata: { promptTokenCount: 8, candidatesTokenCount: 5, thoughtsTokenCount: 2 },
      },
    ];
    expect(await charged(SSE_TYPE, [sse(gemini)])).toEqual({
      prompt_tokens: 8,
      completion_tokens: 7,
      total_tokens: 15,
      completion_tokens_details: { reasoning_tokens: 2 },
    });
    // A non-SSE streamGenerateContent answer is one JSON array.
    expect(await charged(JSON_TYPE, [JSON.stringify(gemini)])).toMatchObject({ total_tokens: 15 });
    const anthropic = [
      { type: 'message_start', message: { usage: { input_tokens: 6, cache_read_input_tokens: 100 } } },
      { type: 'content_block_delta', delta: { type: 'text_delta', text: 'Hello' } },
      { type: 'message_delta', usage: { output_tokens: 11 } },
    ];
    expect(await charged(SSE_TYPE, [sse(anthropic)])).toEqual({
      prompt_tokens: 106,
      completion_tokens: 11,
      total_tokens: 117,
      prompt_tokens_details: { cached_tokens: 100 },
    });
    expect(
      await charged(JSON_TYPE, [
        JSON.stringify({ usage: { billed_units: { input_tokens: 3, output_tokens: 2 } } }),
      ]),
    ).toMatchObject({ total_tokens: 5 });
    expect(
      await charged(JSON_TYPE, [
        JSON.stringify({ meta: { billed_units: { input_tokens: 4, output_tokens: 2 } } }),
      ]),
    ).toMatchObject({ total_tokens: 6 });
    expect(
      await charged(SSE_TYPE, [sse([{ metadata: { usage: { inputTokens: 9, outputTokens: 3 } } }])]),
    ).toEqual({ prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 });
    const ollama = [
      { response: 'Hel', done: false },
      { response: 'lo', done: true, prompt_eval_count: 26, eval_count: 2 },
    ];
    expect(
      await charged({ 'content-type': 'application/x-ndjson' }, [
        ollama.map((line) => JSON.stringify(line)).join('\n'),
      ]),
    ).toMatchObject({ total_tokens: 28 });
  });

  it('keeps the parts billed apart: cache reads and writes, and reasoning, in each provider’s names', async () => {
    const openAi = {
      usage: {
        prompt_tokens: 1_200,
        completion_tokens: 300,
        total_tokens: 1_500,
        prompt_tokens_details: { cached_tokens: 1_024, audio_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: 256, audio_tokens: 0 },
      },
    };
    const openAiParts = {
      prompt_tokens_details: { cached_tokens: 1_024 },
      completion_tokens_details: { reasoning_tokens: 256 },
    };
    expect(await charged(JSON_TYPE, [JSON.stringify(openAi)])).toEqual({
      prompt_tokens: 1_200,
      completion_tokens: 300,
      total_tokens: 1_500,
      ...openAiParts,
    });
    const responses = {
      type: 'response.completed',
      response: {
        usage: {
          input_tokens: 1_200,
          output_tokens: 300,
          total_tokens: 1_500,
          input_tokens_details: { cached_tokens: 1_024 },
          output_tokens_details: { reasoning_tokens: 256 },
        },
      },
    };
    expect(await charged(SSE_TYPE, [sse([responses])])).toMatchObject(openAiParts);
    // Anthropic: the cache counts in message_start, repeated (cumulative) in message_delta.
    const anthropic = [
      {
        type: 'message_start',
        message: {
          usage: {
            input_tokens: 5,
            cache_read_input_tokens: 100,
            cache_creation_input_tokens: 20,
            cache_creation: { ephemeral_5m_input_tokens: 12, ephemeral_1h_input_tokens: 8 },
            output_tokens: 1,
          },
        },
      },
      { type: 'message_delta', usage: { output_tokens: 7 } },
    ];
    expect(await charged(SSE_TYPE, [sse(anthropic)])).toEqual({
      prompt_tokens: 125,
      completion_tokens: 7,
      total_tokens: 132,
      prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 20, cache_write_1h_tokens: 8 },
    });
    const bedrock = {
      usage: {
        inputTokens: 5,
        outputTokens: 7,
        totalTokens: 132,
        cacheReadInputTokens: 100,
        cacheWriteInputTokens: 20,
      },
    };
    expect(await charged(JSON_TYPE, [JSON.stringify(bedrock)])).toMatchObject({
      prompt_tokens: 125,
      prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 20 },
    });
    const gemini = {
      usageMetadata: {
        promptTokenCount: 1_000,
        cachedContentTokenCount: 800,
        candidatesTokenCount: 50,
        thoughtsTokenCount: 200,
      },
    };
    expect(await charged(JSON_TYPE, [JSON.stringify(gemini)])).toEqual({
      prompt_tokens: 1_000,
      completion_tokens: 250,
      total_tokens: 1_250,
      prompt_tokens_details: { cached_tokens: 800 },
      completion_tokens_details: { reasoning_tokens: 200 },
    });
    const cohere = { usage: { tokens: { input_tokens: 10, output_tokens: 5 }, cached_tokens: 2 } };
    expect(await charged(JSON_TYPE, [JSON.stringify(cohere)])).toMatchObject({
      prompt_tokens: 10,
      prompt_tokens_details: { cached_tokens: 2 },
    });
  });

  it('keeps the audio an OpenAI audio model reports, in a whole answer and at a stream’s end', async () => {
    const usage = {
      prompt_tokens: 90,
      completion_tokens: 400,
      total_tokens: 490,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 40 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 350 },
    };
    const expected = {
      prompt_tokens: 90,
      completion_tokens: 400,
      total_tokens: 490,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 40 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 350 },
    };
    expect(await charged(JSON_TYPE, [JSON.stringify({ usage })])).toEqual(expected);
    const stream = sse([{ choices: [{ delta: { content: 'a' } }] }, { choices: [], usage }]);
    expect(await charged(SSE_TYPE, [stream, 'data: [DONE]\n\n'])).toEqual(expected);
  });

  it('charges an estimate for a generated answer that reports no usage, never zero', async () => {
    const text = 'x'.repeat(400);
    const stream = sse([{ choices: [{ delta: { content: text } }] }, { choices: [{ delta: {} }] }]);
    expect(await charged(SSE_TYPE, [stream, 'data: [DONE]\n\n'])).toEqual({
      prompt_tokens: 12,
      completion_tokens: 100,
      total_tokens: 112,
    });
    // Compressed in an encoding gw cannot read, or corrupt: still charged.
    expect(await charged({ ...SSE_TYPE, 'content-encoding': 'compress' }, ['\x1f\x9d…'])).toMatchObject({
      prompt_tokens: 12,
      completion_tokens: 1,
    });
    expect(await charged({ ...JSON_TYPE, 'content-encoding': 'gzip' }, ['not gzip at all'])).toMatchObject({
      completion_tokens: 1,
    });
    expect(
      await charged({ 'content-type': 'audio/mpeg' }, [Buffer.alloc(64)], {
        ...CHAT,
        operation: 'audio_speech',
      }),
    ).toMatchObject({ prompt_tokens: 12, completion_tokens: 1 });
  });

  it('charges nothing for listings, downloads, errors and empty answers that report no usage', async () => {
    const list = JSON.stringify({ data: [{ id: 'gpt-4o' }] });
    expect(
      await charged(JSON_TYPE, [list], { operation: 'models', method: 'GET', promptTokens: 0 }),
    ).toBeUndefined();
    expect(
      await charged(JSON_TYPE, [list], { operation: 'files', method: 'POST', promptTokens: 0 }),
    ).toBeUndefined();
    expect(await charged(JSON_TYPE, ['{"error":{}}'], CHAT, 429)).toBeUndefined();
    expect(await charged(JSON_TYPE, [], CHAT)).toBeUndefined();
  });
});
