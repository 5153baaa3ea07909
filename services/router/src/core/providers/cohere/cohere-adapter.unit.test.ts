import { networkConfigSchema } from '@gw/shared';
import { type FakeOpenAi, startFakeOpenAi } from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cohereChatAnswer, cohereEmbedAnswer } from '../../../testing/fixtures/cohere-fixtures.ts';
import { UpstreamClient } from '../../upstream-client.ts';
import type { AdapterContext } from '../adapter.ts';
import { cohereAdapter } from './cohere-adapter.ts';

describe('cohere adapter details', () => {
  let fake: FakeOpenAi;
  let http: UpstreamClient;
  const context = (): AdapterContext => ({
    provider: 'cohere',
    http,
    baseUrl: fake.url,
    key: { id: 'k1', value: 'co-test', config: {} },
    network: networkConfigSchema.parse({}),
    timeoutMs: 5_000,
    signal: new AbortController().signal,
    environment: {},
  });
  const chat = () =>
    cohereAdapter.chat!(
      { model: 'command-a', messages: [{ role: 'user', content: 'Hi' }], params: {} },
      context(),
    );

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    http = new UpstreamClient({ connections: 2 });
  });
  afterAll(async () => {
    await http.close();
    await fake.close();
  });

  it('turns a 200 answer that finished with ERROR into an upstream error', async () => {
    fake.enqueue({ json: { ...cohereChatAnswer, finish_reason: 'ERROR' } });
    await expect(chat()).rejects.toMatchObject({
      type: 'upstream_error',
      status: 502,
      upstream: true,
      message: 'cohere ended the generation with ERROR',
    });
  });

  it('answers text parts only and maps STOP_SEQUENCE to stop', async () => {
    fake.enqueue({
      json: {
        ...cohereChatAnswer,
        finish_reason: 'STOP_SEQUENCE',
        message: {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Let me think' },
            { type: 'text', text: 'Hello' },
            { type: 'text', text: ' there' },
          ],
        },
      },
    });
    const result = await chat();
    expect(result.choices[0]).toEqual({
      index: 0,
      message: { role: 'assistant', content: 'Hello there' },
      finish_reason: 'stop',
    });
    expect(result.model).toBe('command-a');
    expect(result.id).toBe(cohereChatAnswer.id);
    expect(result.usage.prompt_tokens_details).toEqual({ cached_tokens: 2 });
  });

  it('answers "{}" for the null arguments of a tool without parameters', async () => {
    fake.enqueue({
      json: {
        id: 'x',
        finish_reason: 'TOOL_CALL',
        message: {
          role: 'assistant',
          tool_plan: 'I will get the time.',
          tool_calls: [
            { id: 'get_time_1', type: 'function', function: { name: 'get_time', arguments: null } },
          ],
        },
      },
    });
    const result = await chat();
    expect(result.choices[0]!.message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'get_time_1', type: 'function', function: { name: 'get_time', arguments: '{}' } }],
    });
    expect(result.choices[0]!.finish_reason).toBe('tool_calls');
    expect(result.usage).toEqual({ prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 });
  });

  it('embeds a single string, honours input_type and dimensions and drops OpenAI-only params', async () => {
    fake.enqueue({ json: cohereEmbedAnswer });
    const result = await cohereAdapter.embeddings!(
      {
        model: 'embed-v4.0',
        input: 'a',
        params: {
          input_type: 'search_query',
          dimensions: 256,
          encoding_format: 'float',
          user: 'u',
          truncate: 'END',
        },
      },
      context(),
    );
    expect(fake.last().path).toBe('/v2/embed');
    expect(fake.last().body).toEqual({
      model: 'embed-v4.0',
      texts: ['a'],
      input_type: 'search_query',
      embedding_types: ['float'],
      output_dimension: 256,
      truncate: 'END',
    });
    expect(result.usage).toEqual({ prompt_tokens: 2, completion_tokens: 0, total_tokens: 2 });
    expect(result.model).toBe('embed-v4.0');
  });

  it('reads the message of an error body that has no id', async () => {
    fake.enqueue({ status: 429, json: { message: 'too many tokens' }, headers: { 'retry-after': '3' } });
    await expect(chat()).rejects.toMatchObject({ status: 429, message: 'too many tokens', retryAfter: 3 });
  });
});
