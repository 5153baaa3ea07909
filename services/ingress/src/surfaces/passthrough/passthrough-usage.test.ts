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
    // Cohere bills `billed_units`; its `tokens` count the prompt template it adds too.
    expect(
      await charged(JSON_TYPE, [
        JSON.stringify({
          usage: {
            billed_units: { input_tokens: 6_772, output_tokens: 248 },
            tokens: { input_tokens: 7_596, output_tokens: 645 },
          },
        }),
      ]),
    ).toEqual({ prompt_tokens: 6_772, completion_tokens: 248, total_tokens: 7_020 });
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

  it('reads Gemini’s image and audio tokens from its breakdowns by modality', async () => {
    const gemini = {
      usageMetadata: {
        promptTokenCount: 370,
        candidatesTokenCount: 1_300,
        totalTokenCount: 1_670,
        promptTokensDetails: [
          { modality: 'TEXT', tokenCount: 12 },
          { modality: 'IMAGE', tokenCount: 258 },
          { modality: 'AUDIO', tokenCount: 100 },
        ],
        candidatesTokensDetails: [
          { modality: 'TEXT', tokenCount: 10 },
          { modality: 'IMAGE', tokenCount: 1_290 },
        ],
      },
    };
    expect(await charged(SSE_TYPE, [sse([gemini])])).toEqual({
      prompt_tokens: 370,
      completion_tokens: 1_300,
      total_tokens: 1_670,
      prompt_tokens_details: { audio_tokens: 100, image_tokens: 258 },
      completion_tokens_details: { image_tokens: 1_290 },
    });
  });
});

describe('pass-through usage of images, audio and batches', () => {
  const GENERATIONS = { operation: 'images_generations', method: 'POST', promptTokens: 9 } as const;
  const TRANSCRIPTIONS = { operation: 'audio_transcriptions', method: 'POST', promptTokens: 0 } as const;
  const SPEECH = { operation: 'audio_speech', method: 'POST', promptTokens: 8 } as const;
  const BATCH = { operation: 'batches', method: 'GET', promptTokens: 0 } as const;
  /** gpt-image-1's usage: the prompt's text and image tokens, and the image made as output tokens. */
  const IMAGE_USAGE = {
    input_tokens: 50,
    input_tokens_details: { text_tokens: 10, image_tokens: 40 },
    output_tokens: 4_160,
    total_tokens: 4_210,
  };

  it('charges gpt-image-1 its image tokens in and out, read past megabytes of base64, and counts the images', async () => {
    const answer = JSON.stringify({
      created: 1_713_833_628,
      data: [{ b64_json: 'iVBORw0KGgo'.repeat(300_000) }],
      background: 'opaque',
      output_format: 'png',
      quality: 'high',
      size: '1024x1024',
      usage: IMAGE_USAGE,
    });
    const expected = {
      prompt_tokens: 50,
      completion_tokens: 4_160,
      total_tokens: 4_210,
      prompt_tokens_details: { image_tokens: 40 },
      completion_tokens_details: { image_tokens: 4_160 },
      units: { images: 1 },
    };
    expect(await charged(JSON_TYPE, split(Buffer.from(answer), 65_536), GENERATIONS)).toEqual(expected);
    expect(
      await charged(
        { ...JSON_TYPE, 'content-encoding': 'gzip' },
        split(gzipSync(answer), 16_384),
        GENERATIONS,
      ),
    ).toEqual(expected);
    // A model whose output holds text too splits it: only its image tokens are images.
    const split_ = { ...IMAGE_USAGE, output_tokens_details: { image_tokens: 4_000, text_tokens: 160 } };
    expect(
      await charged(
        JSON_TYPE,
        [JSON.stringify({ data: [{ b64_json: 'iVBO' }], usage: split_ })],
        GENERATIONS,
      ),
    ).toMatchObject({ completion_tokens: 4_160, completion_tokens_details: { image_tokens: 4_000 } });
  });

  it('charges a DALL·E answer, which reports no usage, per image made instead of an estimate', async () => {
    const answer = {
      created: 1_713_833_628,
      data: [
        { url: 'https://images.example/1.png', revised_prompt: 'A cat on a mat, in watercolour' },
        { url: 'https://images.example/2.png', revised_prompt: 'A cat on a mat, in oil' },
      ],
    };
    expect(await charged(JSON_TYPE, [JSON.stringify(answer)], GENERATIONS)).toEqual({
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
      units: { images: 2 },
    });
    // An answer that made no image and reports nothing is still charged an estimate.
    expect(await charged(JSON_TYPE, ['{"created":1,"data":[]}'], GENERATIONS)).toEqual({
      prompt_tokens: 9,
      completion_tokens: 1,
      total_tokens: 10,
    });
  });

  it('counts the images of a streamed image answer, one for each completed event, with the usage', async () => {
    const stream = sse([
      { type: 'image_generation.partial_image', partial_image_index: 0, b64_json: 'iVBO'.repeat(1_000) },
      {
        type: 'image_generation.completed',
        b64_json: 'iVBO'.repeat(2_000),
        background: 'opaque',
        output_format: 'png',
        quality: 'medium',
        size: '1024x1024',
        usage: { ...IMAGE_USAGE, output_tokens: 1_056, total_tokens: 1_106 },
      },
    ]);
    expect(await charged(SSE_TYPE, split(Buffer.from(stream), 1_000), GENERATIONS)).toEqual({
      prompt_tokens: 50,
      completion_tokens: 1_056,
      total_tokens: 1_106,
      prompt_tokens_details: { image_tokens: 40 },
      completion_tokens_details: { image_tokens: 1_056 },
      units: { images: 1 },
    });
  });

  it('charges a transcription the seconds of audio it reports, or its tokens with their audio', async () => {
    const seconds = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
    // whisper-1, json: the duration usage.
    expect(
      await charged(
        JSON_TYPE,
        [JSON.stringify({ text: 'Hello.', usage: { type: 'duration', seconds: 9 } })],
        TRANSCRIPTIONS,
      ),
    ).toEqual({ ...seconds, units: { audio_seconds: 9 } });
    // verbose_json: the audio's duration beside the segments, whether or not a usage says it.
    const verbose = {
      task: 'transcribe',
      language: 'english',
      duration: 8.47,
      text: 'The beach was a popular spot.',
      segments: [{ id: 0, start: 0, end: 3.32, text: 'The beach was a popular spot.' }],
    };
    expect(await charged(JSON_TYPE, [JSON.stringify(verbose)], TRANSCRIPTIONS)).toEqual({
      ...seconds,
      units: { audio_seconds: 8.47 },
    });
    // gpt-4o-transcribe: tokens, the audio ones in `input_token_details`.
    const tokens = {
      text: 'Hello.',
      usage: {
        type: 'tokens',
        input_tokens: 14,
        input_token_details: { text_tokens: 0, audio_tokens: 14 },
        output_tokens: 45,
        total_tokens: 59,
      },
    };
    const expectedTokens = {
      prompt_tokens: 14,
      completion_tokens: 45,
      total_tokens: 59,
      prompt_tokens_details: { audio_tokens: 14 },
    };
    expect(await charged(JSON_TYPE, [JSON.stringify(tokens)], TRANSCRIPTIONS)).toEqual(expectedTokens);
    const stream = sse([
      { type: 'transcript.text.delta', delta: 'Hello.' },
      { type: 'transcript.text.done', text: 'Hello.', usage: tokens.usage },
    ]);
    expect(await charged(SSE_TYPE, [stream], TRANSCRIPTIONS)).toEqual(expectedTokens);
    // Mistral (Voxtral): tokens and the seconds of audio.
    const mistral = {
      model: 'voxtral-mini-2507',
      text: 'Hello.',
      language: 'en',
      segments: [],
      usage: { prompt_audio_seconds: 30, prompt_tokens: 4, completion_tokens: 42, total_tokens: 46 },
    };
    expect(await charged(JSON_TYPE, [JSON.stringify(mistral)], TRANSCRIPTIONS)).toEqual({
      prompt_tokens: 4,
      completion_tokens: 42,
      total_tokens: 46,
      units: { audio_seconds: 30 },
    });
  });

  it('charges speech the characters of its input, and the tokens a streamed speech reports', async () => {
    const input = 'Héllo, wörld 👋';
    const call = { ...SPEECH, json: { model: 'tts-1', voice: 'alloy', input } };
    expect(
      await charged({ 'content-type': 'audio/mpeg' }, [Buffer.alloc(64), Buffer.alloc(64)], call),
    ).toEqual({
      prompt_tokens: 0,
      completion_tokens: 0,
      total_tokens: 0,
      units: { characters: 14 },
    });
    const stream = sse([
      { type: 'speech.audio.delta', audio: 'SUQzBAAAAAAA' },
      { type: 'speech.audio.done', usage: { input_tokens: 14, output_tokens: 101, total_tokens: 115 } },
    ]);
    expect(
      await charged(SSE_TYPE, [stream], { ...call, json: { ...call.json, stream_format: 'sse' } }),
    ).toEqual({
      prompt_tokens: 14,
      completion_tokens: 101,
      total_tokens: 115,
      units: { characters: 14 },
    });
    // Refused: nothing spoken, nothing charged.
    expect(await charged(JSON_TYPE, ['{"error":{"message":"bad voice"}}'], call, 400)).toBeUndefined();
  });

  it('reports a finished batch’s usage marked with the batch, and nothing for any other batches answer', async () => {
    const batch = {
      id: 'batch_abc123',
      object: 'batch',
      endpoint: '/v1/chat/completions',
      model: 'gpt-4o-mini-2024-07-18',
      input_file_id: 'file-abc123',
      completion_window: '24h',
      status: 'completed',
      output_file_id: 'file-cvaTdG',
      created_at: 1_711_471_533,
      request_counts: { total: 100, completed: 95, failed: 5 },
      usage: {
        input_tokens: 1_500,
        input_tokens_details: { cached_tokens: 1_024 },
        output_tokens: 500,
        output_tokens_details: { reasoning_tokens: 300 },
        total_tokens: 2_000,
      },
      metadata: { customer_id: 'user_123456789' },
    };
    const usage = {
      prompt_tokens: 1_500,
      completion_tokens: 500,
      total_tokens: 2_000,
      prompt_tokens_details: { cached_tokens: 1_024 },
      completion_tokens_details: { reasoning_tokens: 300 },
    };
    expect(await charged(JSON_TYPE, [JSON.stringify(batch)], BATCH)).toEqual({
      ...usage,
      batch: { id: 'batch_abc123', model: 'gpt-4o-mini-2024-07-18' },
    });
    const { model: _model, ...unnamed } = batch;
    expect(await charged(JSON_TYPE, [JSON.stringify({ ...unnamed, status: 'expired' })], BATCH)).toEqual({
      ...usage,
      batch: { id: 'batch_abc123' },
    });
    // Running, just created, listed, or from before batches reported usage: nothing, and no estimate either.
    const zero = { ...batch.usage, input_tokens: 0, output_tokens: 0, total_tokens: 0 };
    for (const [answer, call] of [
      [{ ...batch, status: 'in_progress', usage: { ...batch.usage, input_tokens: 700 } }, BATCH],
      [
        { ...batch, status: 'validating', usage: zero },
        { ...BATCH, method: 'POST' },
      ],
      [{ object: 'list', data: [batch], has_more: false }, BATCH],
      [{ ...batch, usage: undefined }, BATCH],
    ] as const) {
      expect(await charged(JSON_TYPE, [JSON.stringify(answer)], call)).toBeUndefined();
    }
  });
});
