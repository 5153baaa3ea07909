import { networkConfigSchema } from '@gw/shared';
import { type FakeOpenAi, startFakeOpenAi } from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chatAnswer, chatStreamEvents } from '../../../testing/fixtures/anthropic-fixtures.ts';
import { UpstreamClient } from '../../upstream-client.ts';
import type { AdapterContext } from '../adapter.ts';
import { createAnthropicAdapter } from './anthropic-adapter.ts';

/** The overrides Claude on Vertex needs: model in the path, a fetched token, anthropic_version in the body. */
const vertexLike = createAnthropicAdapter({
  path: (model, _context, stream) => ({
    path: `/v1/projects/p/locations/us-east5/publishers/anthropic/models/${model}:${stream ? 'streamRawPredict' : 'rawPredict'}`,
  }),
  headers: async () => ({ authorization: 'Bearer ya29.token' }),
  adjustBody: ({ model: _model, ...body }) => ({ ...body, anthropic_version: 'vertex-2023-10-16' }),
});

describe('createAnthropicAdapter overrides', () => {
  let fake: FakeOpenAi;
  let http: UpstreamClient;
  beforeAll(async () => {
    fake = await startFakeOpenAi();
    http = new UpstreamClient({ connections: 2 });
  });
  afterAll(async () => {
    await http.close();
    await fake.close();
  });

  const context = (): AdapterContext => ({
    provider: 'vertex',
    http,
    baseUrl: fake.url,
    key: { id: 'k', value: 'unused', config: {} },
    network: networkConfigSchema.parse({}),
    timeoutMs: 5_000,
    signal: new AbortController().signal,
    environment: {},
  });
  const input = {
    model: 'claude-sonnet-4-5@20250929',
    messages: [{ role: 'user' as const, content: 'Hi' }],
    params: {},
  };

  it('sends chat to the overridden path, with the overridden headers and body', async () => {
    fake.enqueue({ json: chatAnswer });
    const result = await vertexLike.chat!(input, context());
    const request = fake.last();
    expect(request.path).toBe(
      '/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict',
    );
    expect(request.headers['authorization']).toBe('Bearer ya29.token');
    expect(request.headers['x-api-key']).toBeUndefined();
    expect(request.body).toEqual({
      anthropic_version: 'vertex-2023-10-16',
      max_tokens: 4096,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    });
    expect(result.choices[0]!.message.content).toBe('Hello there');
  });

  it('serves text completions over chat', () => {
    expect(vertexLike.capabilities).toMatchObject({
      operations: ['chat', 'chat_stream', 'text', 'text_stream'],
      textViaChat: true,
    });
  });

  it('streams from the stream path', async () => {
    // The fake frames each entry as `data: …` only; the mapper goes by the payload's type, not the event name.
    fake.enqueue({ events: chatStreamEvents.map((framed) => framed.split('\ndata: ')[1]!.trim()) });
    const chunks = [];
    for await (const chunk of vertexLike.chatStream!(input, context())) chunks.push(chunk);
    expect(fake.last().path).toMatch(/:streamRawPredict$/);
    expect((fake.last().body as { stream?: boolean }).stream).toBe(true);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? '').join('')).toBe('Hello thére');
  });
});
