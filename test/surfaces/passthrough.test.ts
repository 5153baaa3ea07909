// The pass-through `/v1` family (docs/surfaces.md) in both modes: multipart uploads streamed to the
// provider as they arrive, binary answers streamed back, gw's provider key injected and the caller's
// provider credentials stripped, unsupported operations refused, governance (limits) applied, usage read
// from the answer and charged.

import { gzipSync } from 'node:zlib';
import {
  type FakeRoute,
  type FakeUpstream,
  type GatewayConfigInput,
  type LaunchedGateway,
  startFakeAnthropic,
  startFakeUpstream,
  waitFor,
} from '@gw/testkit';
import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGatewayError } from '../support/http.ts';
import { MODES, VIRTUAL_KEY } from './surface-gateway.ts';

const LIMITED_KEY = 'sk-gw-passthroughlimited000000000000000000000';
const SILENT_KEY = 'sk-gw-passthroughsilent0000000000000000000000';
const OPENAI_KEY = 'sk-openai-gw-passthrough';
const SPEECH = [Buffer.alloc(64 * 1024, 1), Buffer.alloc(64 * 1024, 2), Buffer.alloc(32 * 1024, 3)];
const BOUNDARY = 'gwboundary7MA4YWxkTrZu0gW';

/** The OpenAI endpoints the family passes through; any other path answers the path it was asked. */
const OPENAI_ROUTES: FakeRoute[] = [
  { path: /^\/v1\/audio\/transcriptions$/, answer: () => ({ json: { text: 'hello from audio' } }) },
  {
    path: /^\/v1\/audio\/speech$/,
    // The pause between pieces is the behaviour under test: a slow binary answer must reach the caller as it
    // comes.
    answer: () => ({ headers: { 'content-type': 'audio/mpeg' }, chunks: SPEECH, delayMs: 150 }),
  },
  {
    path: /^\/v1\/models$/,
    answer: () => ({ json: { object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model' }] } }),
  },
  {
    path: /^\/v1\/completions$/,
    // Compressed when the caller accepts it (fetch does): gw relays the bytes as they are and reads a copy.
    answer: (request) => {
      const json = {
        id: 'cmpl-1',
        object: 'text_completion',
        model: 'gpt-3.5-turbo-instruct',
        choices: [{ index: 0, text: 'Once', finish_reason: 'stop' }],
        usage: { prompt_tokens: 10, completion_tokens: 30, total_tokens: 40 },
      };
      if (!String(request.headers['accept-encoding'] ?? '').includes('gzip')) return { json };
      return {
        headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
        chunks: [gzipSync(JSON.stringify(json))],
      };
    },
  },
  {
    // A stream without a usage event (the caller did not ask for one): 400 characters of text.
    path: /^\/v1\/responses$/,
    answer: () => ({
      headers: { 'content-type': 'text/event-stream' },
      chunks: [
        Buffer.from(
          `data: ${JSON.stringify({ type: 'response.output_text.delta', delta: 'x'.repeat(400) })}\n\n`,
        ),
        Buffer.from('data: [DONE]\n\n'),
      ],
    }),
  },
  { path: /./, answer: (request) => ({ json: { echoed: request.path.split('?')[0] } }) },
];

function multipartHead(): Buffer {
  return Buffer.from(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\nopenai/whisper-1\r\n` +
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="talk.wav"\r\nContent-Type: audio/wav\r\n\r\n`,
  );
}

describe.each(MODES)('pass-through /v1 family (%s)', (_mode, start) => {
  let openai: FakeUpstream;
  let anthropic: FakeUpstream;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    [openai, anthropic] = await Promise.all([startFakeUpstream(OPENAI_ROUTES), startFakeAnthropic()]);
    const network = (url: string) => ({ base_url: url, max_retries: 0 });
    const config: GatewayConfigInput = {
      client: { enforce_virtual_keys: true },
      providers: {
        openai: { keys: [{ value: OPENAI_KEY }], network_config: network(openai.url) },
        anthropic: { keys: [{ value: 'sk-ant-gw' }], network_config: network(anthropic.url) },
      },
      governance: {
        virtual_keys: [
          {
            id: 'vk-pass',
            name: 'pass',
            value: VIRTUAL_KEY,
            provider_configs: [
              { provider: 'openai', allowed_models: ['*'] },
              { provider: 'anthropic', allowed_models: ['*'] },
            ],
          },
          {
            id: 'vk-limited',
            name: 'limited',
            value: LIMITED_KEY,
            provider_configs: [{ provider: 'openai', allowed_models: ['gpt-3.5-turbo-instruct'] }],
            rate_limit: { token_max_limit: 30, token_reset_duration: '1d' },
          },
          {
            id: 'vk-silent',
            name: 'silent',
            value: SILENT_KEY,
            provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o'] }],
            rate_limit: { token_max_limit: 60, token_reset_duration: '1d' },
          },
        ],
      },
    };
    gateway = await start(config);
  });
  afterAll(async () => {
    await gateway?.close();
    await Promise.all([openai?.close(), anthropic?.close()]);
  });

  it('streams a multipart upload to the provider while it is still being sent', async () => {
    const head = multipartHead();
    const firstHalf = Buffer.alloc(512 * 1024, 7);
    const secondHalf = Buffer.alloc(512 * 1024, 9);
    const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
    const before = openai.bytesReceived;
    let forwardedEarly = false;
    const body = new ReadableStream<Uint8Array>({
      async start(controller) {
        controller.enqueue(head);
        controller.enqueue(firstHalf);
        // Only once the provider has received the first half does the rest get sent: a gateway that held
        // the body whole would wait forever here.
        forwardedEarly = await Promise.race([
          openai.waitForBytes(before + head.length + firstHalf.length - 1024).then(() => true),
          new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5_000)),
        ]);
        controller.enqueue(secondHalf);
        controller.enqueue(tail);
        controller.close();
      },
    });
    const response = await fetch(`${gateway.url}/v1/audio/transcriptions`, {
      method: 'POST',
      headers: {
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        'x-gw-vk': VIRTUAL_KEY,
        authorization: 'Bearer sk-callers-own-openai-key',
        'api-key': 'callers-azure-key',
        'x-goog-api-key': 'callers-google-key',
      },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ text: 'hello from audio' });
    expect(forwardedEarly).toBe(true);
    const received = openai.last();
    expect(received.path).toBe('/v1/audio/transcriptions');
    // The model's provider prefix is removed in the part that names it; everything else is byte for byte.
    expect(received.raw.toString('latin1')).toContain('name="model"\r\n\r\nwhisper-1\r\n');
    expect(received.raw.length).toBe(
      head.length - 'openai/'.length + firstHalf.length + secondHalf.length + tail.length,
    );
    expect(received.headers['content-type']).toBe(`multipart/form-data; boundary=${BOUNDARY}`);
    expect(received.headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);
    for (const stripped of ['api-key', 'x-goog-api-key', 'x-gw-vk', 'x-api-key']) {
      expect(received.headers[stripped], stripped).toBeUndefined();
    }
  });

  it('serves the OpenAI SDK’s own uploads and binary downloads, streaming the answer back', async () => {
    const client = new OpenAI({ apiKey: VIRTUAL_KEY, baseURL: `${gateway.url}/v1`, maxRetries: 0 });
    const transcription = await client.audio.transcriptions.create({
      file: await toFile(Buffer.from('RIFF....WAVEfmt '), 'clip.wav', { type: 'audio/wav' }),
      model: 'whisper-1',
    });
    expect(transcription.text).toBe('hello from audio');
    expect(openai.last().raw.toString('latin1')).toContain('filename="clip.wav"');
    expect(openai.last().headers.authorization).toBe(`Bearer ${OPENAI_KEY}`);

    const startedAt = performance.now();
    const speech = await client.audio.speech.create({ model: 'tts-1', voice: 'alloy', input: 'Hello' });
    expect(speech.headers.get('content-type')).toBe('audio/mpeg');
    const reader = speech.body!.getReader();
    const first = await reader.read();
    const firstAt = performance.now() - startedAt;
    const chunks = [Buffer.from(first.value!)];
    for (let next = await reader.read(); !next.done; next = await reader.read())
      chunks.push(Buffer.from(next.value));
    const totalAt = performance.now() - startedAt;
    expect(Buffer.concat(chunks).equals(Buffer.concat(SPEECH))).toBe(true);
    // The fake pauses 150 ms between pieces: the first one arrives well before the answer ends.
    expect(totalAt - firstAt).toBeGreaterThan(200);
    expect(openai.last().body).toMatchObject({ model: 'tts-1', voice: 'alloy' });

    const models = await new OpenAI({
      apiKey: VIRTUAL_KEY,
      baseURL: `${gateway.url}/openai/v1`,
      maxRetries: 0,
    }).models.list();
    expect(models.data.map((model) => model.id)).toEqual(['gpt-4o-mini']);
  });

  it('takes the provider from the model prefix or x-gw-provider, and refuses what a provider lacks', async () => {
    const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
      fetch(`${gateway.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-gw-vk': VIRTUAL_KEY, ...headers },
        body: JSON.stringify(body),
      });
    // x-gw-provider makes /v1/embeddings the pass-through (without it, any provider serves it translated).
    const forwarded = await post(
      '/v1/embeddings',
      { model: 'text-embedding-3-small', input: 'hi' },
      { 'x-gw-provider': 'openai' },
    );
    expect(await forwarded.json()).toEqual({ echoed: '/v1/embeddings' });
    expect(openai.last().body).toEqual({ model: 'text-embedding-3-small', input: 'hi' });

    const refused = await post('/v1/images/generations', {
      model: 'anthropic/claude-opus-4-7',
      prompt: 'a cat',
    });
    expectGatewayError(
      { status: refused.status, headers: refused.headers, body: await refused.json() },
      { status: 400, type: 'unsupported_operation', message: "'anthropic'" },
    );
    const byHeader = await post(
      '/v1/audio/speech',
      { model: 'x', input: 'hi' },
      { 'x-gw-provider': 'anthropic' },
    );
    expect(byHeader.status).toBe(400);
    expect(((await byHeader.json()) as { error: { type: string } }).error.type).toBe('unsupported_operation');

    const counted = await post('/v1/count-tokens', { model: 'anthropic/claude-opus-4-7', messages: [] });
    expect(await counted.json()).toEqual({ input_tokens: 42 });
    expect(anthropic.last()).toMatchObject({
      path: '/v1/messages/count_tokens',
      headers: { 'x-api-key': 'sk-ant-gw' },
    });

    const files = await fetch(`${gateway.url}/v1/files/file-abc/content?x=1`, {
      headers: { 'x-gw-vk': VIRTUAL_KEY },
    });
    expect(await files.json()).toEqual({ echoed: '/v1/files/file-abc/content' });
    expect(openai.last()).toMatchObject({ method: 'GET', path: '/v1/files/file-abc/content?x=1' });
  });

  it('applies governance: key required, model access, and token limits charged from the answer’s usage', async () => {
    const completions = (key?: string, model = 'gpt-3.5-turbo-instruct') =>
      fetch(`${gateway.url}/v1/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}) },
        body: JSON.stringify({ model, prompt: 'Once' }),
      });
    const anonymous = await completions();
    expect(anonymous.status).toBe(401);
    expect(((await anonymous.json()) as { error: { type: string } }).error.type).toBe('virtual_key_required');
    expect((await completions(LIMITED_KEY, 'gpt-4o')).status).toBe(403);
    // Files name no model: only a key allowed every model of the provider may use them.
    const files = await fetch(`${gateway.url}/v1/files`, {
      headers: { authorization: `Bearer ${LIMITED_KEY}` },
    });
    expect(files.status).toBe(403);

    const served = await completions(LIMITED_KEY);
    expect(served.status).toBe(200);
    // The answer came gzip-compressed (fetch accepts it): relayed as it was, its usage read from a copy.
    expect(served.headers.get('content-encoding')).toBe('gzip');
    expect(await served.json()).toMatchObject({ usage: { total_tokens: 40 } });
    // The answer reported 40 tokens against a limit of 30: once settled, the key is refused.
    const refused = await waitFor(async () => {
      const answer = await completions(LIMITED_KEY);
      return answer.status === 429 ? answer : undefined;
    });
    expect(((await refused.json()) as { error: { type: string } }).error.type).toBe('token_limit_exceeded');
  });

  it('charges a generated answer that reports no usage an estimate of what it relayed', async () => {
    const responses = () =>
      fetch(`${gateway.url}/v1/responses`, {
        method: 'POST',
        // The pass-through (x-gw-provider), not the Responses surface: the fake's events are not OpenAI's.
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${SILENT_KEY}`,
          'x-gw-provider': 'openai',
        },
        body: JSON.stringify({ model: 'gpt-4o', input: 'Tell me a story', stream: true }),
      });
    const served = await responses();
    expect(served.status).toBe(200);
    expect(await served.text()).toContain('x'.repeat(400));
    // About 100 tokens of text relayed against a limit of 60: charged, so the key is refused once settled.
    const refused = await waitFor(async () => {
      const answer = await responses();
      return answer.status === 429 ? answer : undefined;
    });
    expect(((await refused.json()) as { error: { type: string } }).error.type).toBe('token_limit_exceeded');
  });
});
