import { networkConfigSchema } from '@gw/shared';
import { type FakeOpenAi, startFakeOpenAi } from '@gw/testkit';
import {
  openAiRequestExpectations,
  PROVIDER_CONTRACT_INPUTS,
  runProviderContract,
} from '@gw/testkit/provider-contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAiWireFixtures } from '../../../testing/fixtures/openai-wire-fixtures.ts';
import { UpstreamClient } from '../../upstream-client.ts';
import type { AdapterContext, ResolvedKey } from '../adapter.ts';
import { azureAdapter } from './azure-adapter.ts';

const model = 'gpt-4o';
const filter = {
  hate: { filtered: false, severity: 'safe' },
  violence: { filtered: false, severity: 'safe' },
};
const deploymentPath = (operation: string) =>
  `/openai/deployments/prod-gpt4o/${operation}?api-version=2024-10-21`;

const wire = openAiWireFixtures({
  model: 'gpt-4o-2024-11-20',
  extra: { system_fingerprint: 'fp_b705f0c291' },
  answerExtra: { prompt_filter_results: [{ prompt_index: 0, content_filter_results: filter }] },
  preamble: [{ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: [] }],
  errorBody: { error: { code: 'BadRequest', message: 'bad things happened', param: null, type: null } },
});

runProviderContract({
  name: 'azure',
  adapter: azureAdapter,
  model,
  key: { id: 'k1', value: 'azure-key', config: { deployments: { [model]: 'prod-gpt4o' } } },
  // Azure's true format: prompt filter results first (a chunk without choices), filter results on answers.
  upstream: wire.upstream,
  billedUsage: wire.billedUsage,
  expectRequest: openAiRequestExpectations({
    model,
    headers: { 'api-key': 'azure-key', authorization: undefined },
    paths: {
      chat: deploymentPath('chat/completions'),
      text: deploymentPath('completions'),
      embeddings: deploymentPath('embeddings'),
    },
  }),
});

describe('azure adapter', () => {
  let fake: FakeOpenAi;
  const http = new UpstreamClient();
  beforeAll(async () => {
    fake = await startFakeOpenAi();
  });
  afterAll(async () => {
    await http.close();
    await fake.close();
  });

  const chatWith = (key: ResolvedKey, baseUrl = 'http://127.0.0.1:9') => {
    const context: AdapterContext = {
      provider: 'azure',
      http,
      baseUrl,
      key,
      network: networkConfigSchema.parse({}),
      timeoutMs: 5_000,
      signal: new AbortController().signal,
      environment: {},
    };
    return azureAdapter.chat!({ model: 'gpt-4o-mini', ...PROVIDER_CONTRACT_INPUTS.chat }, context);
  };

  it("sends to the key's endpoint, with the model as deployment and the configured api-version", async () => {
    await chatWith({
      id: 'k1',
      value: 'resource-key',
      config: { endpoint: fake.url, api_version: '2025-04-01-preview' },
    });
    expect(fake.last().path).toBe(
      '/openai/deployments/gpt-4o-mini/chat/completions?api-version=2025-04-01-preview',
    );
    expect(fake.last().headers['api-key']).toBe('resource-key');
  });

  it('takes a Responses request verbatim to its v1 API, the deployment as the model', async () => {
    fake.enqueue({
      json: {
        id: 'resp_az',
        object: 'response',
        status: 'completed',
        model: 'prod-gpt5',
        output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hi' }] }],
        usage: { input_tokens: 3, output_tokens: 1, total_tokens: 4 },
      },
    });
    const context: AdapterContext = {
      provider: 'azure',
      http,
      baseUrl: 'http://127.0.0.1:9',
      key: {
        id: 'k1',
        value: 'resource-key',
        config: { endpoint: fake.url, deployments: { 'gpt-5': 'prod-gpt5' } },
      },
      network: networkConfigSchema.parse({}),
      timeoutMs: 5_000,
      signal: new AbortController().signal,
      environment: {},
    };
    expect(azureAdapter.nativeFormat!('gpt-5')).toBe('openai-responses');
    const body = { input: 'Hi', tools: [{ type: 'web_search' }], store: false };
    const answer = await azureAdapter.nativeChat!(
      { model: 'gpt-5', native: { format: 'openai-responses', body, headers: {} } },
      context,
    );
    expect(answer.choices[0]!.message.content).toBe('Hi');
    expect(fake.last().path).toBe('/openai/v1/responses');
    expect(fake.last().headers['api-key']).toBe('resource-key');
    expect(fake.last().body).toEqual({ ...body, model: 'prod-gpt5', stream: false });
  });

  it('sends an Entra ID token as a bearer token instead of api-key', async () => {
    await chatWith({ id: 'k1', value: 'eyJ0eXAi.token', config: { auth: 'entra' } }, fake.url);
    expect(fake.last().headers['authorization']).toBe('Bearer eyJ0eXAi.token');
    expect(fake.last().headers['api-key']).toBeUndefined();
  });

  it('refuses a key config it cannot use, naming the field', async () => {
    await expect(
      chatWith({ id: 'k1', value: 'x', config: { auth: 'password' } }, fake.url),
    ).rejects.toMatchObject({
      type: 'provider_not_configured',
      message: expect.stringContaining('auth'),
    });
  });
});
