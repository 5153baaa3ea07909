// Pass-through usage as billed (docs/surfaces.md), both modes: what gw reads of the answers of OpenAI's image, audio
// and batch APIs reaches the request's record. gpt-image-1's usage is found behind megabytes of base64; a DALL·E
// answer (no usage) and a speech answer (audio) are charged their units, not a token estimate; a transcription's
// tokens and a finished batch's usage are read, a running batch charges nothing.
import {
  type FakeRoute,
  type FakeUpstream,
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startEmbedded,
  startFakeUpstream,
  waitFor,
} from '@gw/testkit';
import { startClusterWithLogs } from '@gw/testkit/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get } from './support/http.ts';

const ADMIN_TOKEN = 'passthrough-usage-admin';
const VIRTUAL_KEY = 'sk-gw-passthroughusage00000000000000000000000';
const BOUNDARY = 'gwboundaryPassthroughUsage';

/** gpt-image-1's answer: one image of some 3.3 MB of base64, then its usage. */
const IMAGE_ANSWER = {
  created: 1_713_833_628,
  data: [{ b64_json: 'iVBORw0KGgo'.repeat(300_000) }],
  background: 'opaque',
  output_format: 'png',
  quality: 'high',
  size: '1024x1024',
  usage: {
    input_tokens: 50,
    input_tokens_details: { text_tokens: 10, image_tokens: 40 },
    output_tokens: 4_160,
    total_tokens: 4_210,
  },
};

const BATCH = {
  id: 'batch_done',
  object: 'batch',
  endpoint: '/v1/chat/completions',
  model: 'gpt-4o-mini-2024-07-18',
  input_file_id: 'file-abc123',
  completion_window: '24h',
  status: 'completed',
  created_at: 1_711_471_533,
  request_counts: { total: 100, completed: 100, failed: 0 },
  usage: {
    input_tokens: 1_500,
    input_tokens_details: { cached_tokens: 1_024 },
    output_tokens: 500,
    output_tokens_details: { reasoning_tokens: 300 },
    total_tokens: 2_000,
  },
};

const ROUTES: FakeRoute[] = [
  {
    path: /^\/v1\/images\/generations$/,
    answer: (request) =>
      (request.body as { model: string }).model === 'gpt-image-1'
        ? { json: IMAGE_ANSWER }
        : {
            json: {
              created: 1_713_833_628,
              data: [{ url: 'https://images.example/1.png' }, { url: 'https://images.example/2.png' }],
            },
          },
  },
  {
    path: /^\/v1\/audio\/speech$/,
    answer: () => ({ headers: { 'content-type': 'audio/mpeg' }, chunks: [Buffer.alloc(4_096, 1)] }),
  },
  {
    path: /^\/v1\/audio\/transcriptions$/,
    answer: () => ({
      json: {
        text: 'Hello there.',
        usage: {
          type: 'tokens',
          input_tokens: 14,
          input_token_details: { text_tokens: 0, audio_tokens: 14 },
          output_tokens: 45,
          total_tokens: 59,
        },
      },
    }),
  },
  { path: /^\/v1\/batches\/batch_done$/, answer: () => ({ json: BATCH }) },
  {
    path: /^\/v1\/batches\/batch_running$/,
    answer: () => ({
      json: {
        ...BATCH,
        id: 'batch_running',
        status: 'in_progress',
        usage: { ...BATCH.usage, input_tokens: 700 },
      },
    }),
  },
];

function config(fake: FakeUpstream): GatewayConfigInput {
  return {
    client: { enforce_virtual_keys: true },
    providers: {
      openai: {
        keys: [{ value: 'sk-openai-usage' }],
        network_config: { base_url: fake.url, max_retries: 0 },
      },
    },
    governance: {
      virtual_keys: [
        {
          id: 'vk-usage',
          name: 'usage',
          value: VIRTUAL_KEY,
          provider_configs: [{ provider: 'openai', allowed_models: ['*'] }],
        },
      ],
    },
  };
}

const MODES = [
  ['embedded', (input: GatewayConfigInput) => startEmbedded({ config: input, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    (input: GatewayConfigInput) => startClusterWithLogs({ config: input, adminToken: ADMIN_TOKEN }),
  ],
] as const;

interface Counted {
  status: number;
  input_tokens: number;
  output_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
}

describe.each(MODES)('pass-through usage (%s)', (_mode, start) => {
  let fake: FakeUpstream;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    fake = await startFakeUpstream(ROUTES);
    gateway = await start(config(fake));
  }, scaled(90_000));
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  /** Makes the call, reads its answer whole, and answers the tokens its log record counts. */
  const countedFor = async (path: string, init: RequestInit = {}): Promise<Counted> => {
    const answer = await fetch(`${gateway.url}${path}`, {
      ...init,
      headers: { authorization: `Bearer ${VIRTUAL_KEY}`, ...init.headers },
    });
    expect(answer.status).toBe(200);
    await answer.arrayBuffer();
    const id = answer.headers.get('x-request-id')!;
    const record = await waitFor(
      async () => {
        const found = await get(`${gateway.adminUrl}/api/logs/${id}`, {
          authorization: `Bearer ${ADMIN_TOKEN}`,
        });
        return found.status === 200 ? (found.body as Counted) : undefined;
      },
      { timeoutMs: 15_000, what: `the log record of ${id}` },
    );
    const { status, input_tokens, output_tokens, cached_tokens, reasoning_tokens } = record;
    return { status, input_tokens, output_tokens, cached_tokens, reasoning_tokens };
  };
  const postJson = (body: object): RequestInit => ({
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const counts = (input: number, output: number, cached = 0, reasoning = 0): Counted => ({
    status: 200,
    input_tokens: input,
    output_tokens: output,
    cached_tokens: cached,
    reasoning_tokens: reasoning,
  });

  it('reads gpt-image-1’s usage behind its base64, and charges DALL·E and speech their units, not an estimate', async () => {
    expect(
      await countedFor('/v1/images/generations', postJson({ model: 'gpt-image-1', prompt: 'a cat' })),
    ).toEqual(counts(50, 4_160));
    // An estimate would charge the prompt's tokens and at least one completion token.
    expect(
      await countedFor(
        '/v1/images/generations',
        postJson({ model: 'dall-e-3', prompt: 'a cat on a mat', n: 2 }),
      ),
    ).toEqual(counts(0, 0));
    expect(
      await countedFor(
        '/v1/audio/speech',
        postJson({ model: 'tts-1', voice: 'alloy', input: 'Hello there, friend.' }),
      ),
    ).toEqual(counts(0, 0));
  });

  it('reads a transcription’s tokens', async () => {
    const body = Buffer.concat([
      Buffer.from(
        `--${BOUNDARY}\r\nContent-Disposition: form-data; name="model"\r\n\r\ngpt-4o-transcribe\r\n` +
          `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="talk.wav"\r\n` +
          'Content-Type: audio/wav\r\n\r\n',
      ),
      Buffer.alloc(2_048, 7),
      Buffer.from(`\r\n--${BOUNDARY}--\r\n`),
    ]);
    const init: RequestInit = {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      body,
    };
    expect(await countedFor('/v1/audio/transcriptions', init)).toEqual(counts(14, 45));
  });

  it('charges a finished batch’s usage when it is read, and nothing for a running one', async () => {
    expect(await countedFor('/v1/batches/batch_done')).toEqual(counts(1_500, 500, 1_024, 300));
    expect(await countedFor('/v1/batches/batch_running')).toEqual(counts(0, 0));
  });
});
