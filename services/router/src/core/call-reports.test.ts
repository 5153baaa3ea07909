// What a router reports of each routed call under its request's id (the settle of a call its ingress lost reads
// it): the usage of the answer the upstream served, how many attempts were sent, and a call that never reached
// the upstream as one.
import { randomUUID } from 'node:crypto';
import {
  callReportSchema,
  createMetrics,
  LiveSettings,
  outboundPolicy,
  parseGatewayConfig,
  secretReferenceRule,
  silentLogger,
} from '@gw/shared';
import { MemoryStore } from '@gw/shared/store';
import { chatCompletion, type FakeOpenAi, startFakeOpenAi, waitFor } from '@gw/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RouterCore } from './router-core.ts';
import type { CompletionRoute } from './router-service.ts';

let fake: FakeOpenAi;
let core: RouterCore;
let store: MemoryStore;

beforeAll(async () => {
  fake = await startFakeOpenAi();
  store = await MemoryStore.open();
  const config = parseGatewayConfig({
    providers: {
      openai: {
        keys: [{ value: 'sk-1' }],
        network_config: { base_url: fake.url, max_retries: 1, retry_backoff_initial_ms: 1 },
      },
      // Nothing listens there: a call to it fails before any answer.
      anthropic: {
        keys: [{ value: 'sk-2' }],
        network_config: { base_url: 'http://127.0.0.1:9', max_retries: 0 },
      },
    },
  });
  core = await RouterCore.start({
    store,
    logger: silentLogger(),
    metrics: createMetrics({ service: 'call-reports-test' }),
    environment: {},
    seedProviders: config.providers,
    client: LiveSettings.of(config).client,
    outbound: outboundPolicy(),
    secretReferences: secretReferenceRule({}),
  });
});
afterAll(async () => {
  await core.close();
  await store.close();
  await fake.close();
});

const route = (targets: CompletionRoute['targets']): CompletionRoute => ({
  requestId: randomUUID(),
  operation: 'chat',
  targets,
  params: {},
  messages: [{ role: 'user', content: 'hello' }],
});
const call = { signal: new AbortController().signal };

/** The reports the router wrote for a request, once there are `count`. */
async function reportsOf(requestId: string, count = 1) {
  await waitFor(async () => (await store.readCallReports(requestId)).length >= count);
  return (await store.readCallReports(requestId)).map((text) => callReportSchema.parse(JSON.parse(text)));
}

it('reports an answered call with its attempts and the usage of the answer it served', async () => {
  const usage = { prompt_tokens: 21, completion_tokens: 4, total_tokens: 25 };
  fake.enqueue(
    { status: 500, json: { error: { message: 'try again', type: 'server_error' } } },
    { json: chatCompletion({ model: 'gpt-4o-2024', usage }) },
  );
  const request = route([{ provider: 'openai', model: 'gpt-4o' }]);
  await core.complete(request, call);
  expect(await reportsOf(request.requestId)).toEqual([
    { outcome: 'answered', attempts: 2, provider: 'openai', model: 'gpt-4o-2024', usage },
  ]);
});

it('reports a stream with the usage its last chunk carried', async () => {
  const request = route([{ provider: 'openai', model: 'gpt-4o' }]);
  for await (const _item of core.stream(request, call));
  expect(await reportsOf(request.requestId)).toEqual([
    {
      outcome: 'answered',
      attempts: 1,
      provider: 'openai',
      model: 'gpt-4o',
      usage: { prompt_tokens: 9, completion_tokens: 3, total_tokens: 12 },
    },
  ]);
});

it('reports a failed call as failed, and one refused before any attempt as never sent', async () => {
  const failed = route([{ provider: 'anthropic', model: 'claude-x' }]);
  await expect(core.complete(failed, call)).rejects.toThrow();
  expect(await reportsOf(failed.requestId)).toEqual([{ outcome: 'failed', attempts: 1 }]);

  const unknown = route([{ provider: 'nowhere', model: 'gpt-4o' }]);
  await expect(core.complete(unknown, call)).rejects.toThrow();
  expect(await reportsOf(unknown.requestId)).toEqual([{ outcome: 'failed', attempts: 0 }]);
});

it('reports a call its caller cancelled while the upstream had it as unmetered', async () => {
  fake.enqueue({ delayMs: 30_000, json: chatCompletion() });
  const request = route([{ provider: 'openai', model: 'gpt-4o' }]);
  const caller = new AbortController();
  const before = fake.requests.length;
  const answer = core.complete(request, { signal: caller.signal });
  await waitFor(() => fake.requests.length > before);
  caller.abort();
  await expect(answer).rejects.toThrow();
  expect(await reportsOf(request.requestId)).toEqual([{ outcome: 'unmetered', attempts: 1 }]);
});

it('reports a stream its reader left before the usage as unmetered', async () => {
  const request = route([{ provider: 'openai', model: 'gpt-4o' }]);
  for await (const _item of core.stream(request, call)) break;
  expect(await reportsOf(request.requestId)).toEqual([{ outcome: 'unmetered', attempts: 1 }]);
});

it('reports nothing when told not to (the embedded gateway, whose ingress cannot lose a call)', async () => {
  const quiet = await RouterCore.start({
    store,
    logger: silentLogger(),
    metrics: createMetrics({ service: 'call-reports-quiet' }),
    environment: {},
    seedProviders: parseGatewayConfig({
      providers: { openai: { keys: [{ value: 'sk-1' }], network_config: { base_url: fake.url } } },
    }).providers,
    client: LiveSettings.of(parseGatewayConfig({})).client,
    outbound: outboundPolicy(),
    secretReferences: secretReferenceRule({}),
    reportCalls: false,
  });
  try {
    const request = route([{ provider: 'openai', model: 'gpt-4o' }]);
    await quiet.complete(request, call);
    // A reporting router's write is queued before its call returns: one of the same kind shows it lands first.
    const reported = route([{ provider: 'openai', model: 'gpt-4o' }]);
    await core.complete(reported, call);
    await reportsOf(reported.requestId);
    expect(await store.readCallReports(request.requestId)).toEqual([]);
  } finally {
    await quiet.close();
  }
});
