import { GatewayError, networkConfigSchema } from '@gw/shared';
import { startFakeBedrock } from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { titanEmbeddingAnswer } from '../../../testing/fixtures/bedrock-fixtures.ts';
import { UpstreamClient } from '../../upstream-client.ts';
import type { AdapterContext } from '../adapter.ts';
import { createBedrockAdapter } from './bedrock-adapter.ts';

const CREDENTIALS = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
};
const EMBEDDINGS: Record<string, number[]> = { a: [0.1, 0.2], b: [0.3, 0.4] };

describe('bedrock embeddings (Titan over InvokeModel)', () => {
  let fake: Awaited<ReturnType<typeof startFakeBedrock>>;
  let http: UpstreamClient;
  const adapter = createBedrockAdapter({
    credentialChain: () => Promise.reject(new Error('unused')),
  });

  beforeAll(async () => {
    fake = await startFakeBedrock({
      credentials: { [CREDENTIALS.accessKeyId]: { secretAccessKey: CREDENTIALS.secretAccessKey } },
      answer: (request) => {
        const text = (request.body as { inputText: string }).inputText;
        const embedding = EMBEDDINGS[text];
        if (!embedding) return { status: 400, json: { message: `no embedding for ${text}` } };
        return { json: titanEmbeddingAnswer(embedding, 1) };
      },
    });
    http = new UpstreamClient({ connections: 4 });
  });
  afterAll(async () => {
    await http.close();
    await fake.close();
  });

  const context = (): AdapterContext => ({
    provider: 'bedrock',
    http,
    baseUrl: fake.url,
    key: {
      id: 'k1',
      value: '',
      config: {
        region: 'us-west-2',
        access_key: CREDENTIALS.accessKeyId,
        secret_key: CREDENTIALS.secretAccessKey,
      },
    },
    network: networkConfigSchema.parse({}),
    timeoutMs: 5_000,
    signal: new AbortController().signal,
    environment: {},
  });

  it('embeds each input with one signed call and answers them in input order', async () => {
    const result = await adapter.embeddings!(
      { model: 'amazon.titan-embed-text-v2:0', input: ['a', 'b'], params: { dimensions: 256 } },
      context(),
    );
    expect(result.data).toEqual([
      { index: 0, embedding: [0.1, 0.2] },
      { index: 1, embedding: [0.3, 0.4] },
    ]);
    expect(result.usage).toEqual({ prompt_tokens: 2, completion_tokens: 0, total_tokens: 2 });
    expect(result.raw).toEqual([titanEmbeddingAnswer([0.1, 0.2], 1), titanEmbeddingAnswer([0.3, 0.4], 1)]);
    expect(fake.rejections).toEqual([]);
    expect(fake.requests.map((request) => request.path)).toEqual([
      '/model/amazon.titan-embed-text-v2%3A0/invoke',
      '/model/amazon.titan-embed-text-v2%3A0/invoke',
    ]);
    expect(fake.requests.map((request) => request.body)).toEqual(
      expect.arrayContaining([
        { inputText: 'a', dimensions: 256 },
        { inputText: 'b', dimensions: 256 },
      ]),
    );
  });

  it('answers a single input with its own body as raw', async () => {
    const result = await adapter.embeddings!(
      { model: 'amazon.titan-embed-text-v2:0', input: 'a', params: {} },
      context(),
    );
    expect(result.raw).toEqual(titanEmbeddingAnswer([0.1, 0.2], 1));
  });

  it('fails with the upstream error when one input fails', async () => {
    const error = await adapter.embeddings!(
      { model: 'amazon.titan-embed-text-v2:0', input: ['a', 'zzz'], params: {} },
      context(),
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).status).toBe(400);
    expect((error as GatewayError).message).toBe('no embedding for zzz');
  });
});
