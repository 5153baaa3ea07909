import { GatewayError, networkConfigSchema } from '@gw/shared';
import { type FakeGoogleTokenEndpoint, startFakeGoogleTokenEndpoint } from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UpstreamClient, UpstreamRequest } from '../../upstream-client.ts';
import type { AdapterContext } from '../adapter.ts';
import { createVertexAdapter } from './vertex-adapter.ts';
import { VERTEX_DEFAULT_BASE_URL } from './vertex-config.ts';

/** An upstream client that records where calls would go and fails them, so no request leaves the machine. */
function recordingClient(record: (request: UpstreamRequest) => void): UpstreamClient {
  const recorded = async (request: UpstreamRequest) => {
    record(request);
    throw new GatewayError({ type: 'upstream_unreachable', message: 'recorded' });
  };
  return { request: recorded, requestWhole: recorded } as unknown as UpstreamClient;
}

describe('vertex adapter routing', () => {
  let tokenEndpoint: FakeGoogleTokenEndpoint;
  beforeAll(async () => {
    tokenEndpoint = await startFakeGoogleTokenEndpoint();
  });
  afterAll(() => tokenEndpoint.close());

  const context = (urls: string[], region: string): AdapterContext => ({
    provider: 'vertex',
    http: recordingClient((request) => urls.push(request.url.href)),
    baseUrl: VERTEX_DEFAULT_BASE_URL,
    key: { id: 'k', value: tokenEndpoint.serviceAccount(), config: { project_id: 'proj', region } },
    network: networkConfigSchema.parse({}),
    timeoutMs: 1_000,
    signal: new AbortController().signal,
    environment: {},
  });
  const chat = (model: string) => ({
    model,
    messages: [{ role: 'user' as const, content: 'Hi' }],
    params: {},
  });

  it("sends Gemini and Claude calls to the key's regional host when no base URL is configured", async () => {
    const adapter = createVertexAdapter();
    const urls: string[] = [];
    await adapter.chat!(chat('gemini-2.5-pro'), context(urls, 'europe-west4')).catch(() => undefined);
    await adapter.chat!(chat('claude-opus-4-1@20250805'), context(urls, 'us-east5')).catch(() => undefined);
    const stream = adapter.chatStream!(chat('claude-opus-4-1@20250805'), context(urls, 'global'));
    await stream[Symbol.asyncIterator]()
      .next()
      .catch(() => undefined);
    await adapter.embeddings!(
      { model: 'text-embedding-005', input: 'a', params: {} },
      context(urls, 'us-central1'),
    ).catch(() => undefined);
    expect(urls).toEqual([
      'https://europe-west4-aiplatform.googleapis.com/v1/projects/proj/locations/europe-west4/publishers/google/models/gemini-2.5-pro:generateContent',
      'https://us-east5-aiplatform.googleapis.com/v1/projects/proj/locations/us-east5/publishers/anthropic/models/claude-opus-4-1@20250805:rawPredict',
      'https://aiplatform.googleapis.com/v1/projects/proj/locations/global/publishers/anthropic/models/claude-opus-4-1@20250805:streamRawPredict',
      'https://us-central1-aiplatform.googleapis.com/v1/projects/proj/locations/us-central1/publishers/google/models/text-embedding-005:predict',
    ]);
    // Four calls, one key: one token exchange.
    expect(tokenEndpoint.exchanges).toHaveLength(1);
  });

  it('takes a Messages request verbatim for Claude models, with the version in the body', async () => {
    const adapter = createVertexAdapter();
    expect(adapter.nativeFormat!('claude-opus-4-1@20250805')).toBe('anthropic');
    expect(adapter.nativeFormat!('gemini-2.5-pro')).toBe('gemini');
    const sent: UpstreamRequest[] = [];
    const recording = context([], 'us-east5');
    recording.http = recordingClient((request) => sent.push(request));
    const body = {
      model: 'claude-opus-4-1',
      max_tokens: 10,
      messages: [
        { role: 'user', content: [{ type: 'text', text: 'Hi', cache_control: { type: 'ephemeral' } }] },
      ],
    };
    await adapter.nativeChat!(
      { model: 'claude-opus-4-1@20250805', native: { format: 'anthropic', body, headers: {} } },
      recording,
    ).catch(() => undefined);
    expect(sent[0]?.url.href).toMatch(/publishers\/anthropic\/models\/claude-opus-4-1@20250805:rawPredict$/);
    const { model: _model, ...rest } = body;
    expect(JSON.parse(String(sent[0]?.body))).toEqual({
      ...rest,
      stream: false,
      anthropic_version: 'vertex-2023-10-16',
    });
  });

  it('fails a misconfigured key before anything is sent', async () => {
    const urls: string[] = [];
    const broken = { ...context(urls, 'us-central1'), key: { id: 'k', value: 'not json', config: {} } };
    await expect(createVertexAdapter().chat!(chat('gemini-2.5-pro'), broken)).rejects.toMatchObject({
      type: 'provider_not_configured',
    });
    expect(urls).toEqual([]);
  });

  it('declares chat, streams, text via chat and embeddings', () => {
    expect(createVertexAdapter().capabilities).toMatchObject({
      operations: ['chat', 'chat_stream', 'embeddings', 'text', 'text_stream'],
      textViaChat: true,
      tools: true,
      vision: true,
    });
  });
});
