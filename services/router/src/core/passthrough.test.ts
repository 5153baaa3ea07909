// The router does not trust its caller's pass-through path (a forged gRPC request, a buggy ingress): a path
// outside its operation's documented root, or one that a URL parser would rewrite, is refused before any
// upstream call, so gw's provider key never goes anywhere else.
import { gzipSync } from 'node:zlib';
import {
  createMetrics,
  LiveSettings,
  outboundPolicy,
  parseGatewayConfig,
  secretReferenceRule,
  silentLogger,
} from '@gw/shared';
import { MemoryStore } from '@gw/shared/store';
import { type FakeOpenAi, startFakeOpenAi } from '@gw/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RouterCore } from './router-core.ts';
import type { PassthroughRequest } from './router-service.ts';

let fake: FakeOpenAi;
let core: RouterCore;
let store: MemoryStore;

beforeAll(async () => {
  fake = await startFakeOpenAi();
  store = await MemoryStore.open();
  const config = parseGatewayConfig({
    providers: { openai: { keys: [{ value: 'sk-router-key' }], network_config: { base_url: fake.url } } },
  });
  core = await RouterCore.start({
    store,
    logger: silentLogger(),
    metrics: createMetrics({ service: 'passthrough-test' }),
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

const request = (
  path: string,
  operation: PassthroughRequest['operation'] = 'models',
): PassthroughRequest => ({
  requestId: 'r',
  operation,
  target: { provider: 'openai', model: '' },
  method: 'GET',
  path,
  headers: {},
  hasBody: false,
});

it.each([
  ['/models/../../api/providers', 'dot segment'],
  ['/models/%2e%2e/%2e%2e/organization/admin_api_keys', 'dot segment'],
  ['/models%2f..%2fusers', 'not under /models'],
  ['/organization/users', 'not under /models'],
  ['/modelsX/y', 'not under /models'],
  ['http://evil.example/v1/models', 'not under /models'],
  ['/models//x', 'empty segment'],
])('refuses the forged path %s', async (path, words) => {
  const before = fake.requests.length;
  await expect(
    core.passthrough(request(path), undefined, { signal: new AbortController().signal }),
  ).rejects.toMatchObject({
    type: 'invalid_request',
    message: expect.stringContaining(words),
  });
  expect(fake.requests.length).toBe(before);
});

it('forwards a documented path with its query', async () => {
  const answer = await core.passthrough(request('/models?limit=2'), undefined, {
    signal: new AbortController().signal,
  });
  for await (const _chunk of answer.body) {
    // drain
  }
  expect(answer.status).toBe(200);
  expect(fake.last().path).toBe('/v1/models?limit=2');
  expect(fake.last().headers.authorization).toBe('Bearer sk-router-key');
});

it.each([
  [
    'plain',
    (text: string) => ({
      status: 401,
      headers: { 'content-type': 'application/json' },
      chunks: [Buffer.from(text)],
    }),
  ],
  [
    'gzip',
    (text: string) => ({
      status: 401,
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      chunks: [gzipSync(text)],
    }),
  ],
])('relays a %s error answer without the credential it echoes', async (_encoding, answer) => {
  fake.enqueue(
    answer(
      JSON.stringify({
        error: { message: 'Incorrect API key provided: sk-router-key. See sk-live-abcdefghijklmnopqrst' },
      }),
    ),
  );
  const relayed = await core.passthrough(request('/models'), undefined, {
    signal: new AbortController().signal,
  });
  const chunks: Buffer[] = [];
  for await (const chunk of relayed.body) chunks.push(Buffer.from(chunk));
  const text = Buffer.concat(chunks).toString('utf8');
  expect(relayed.status).toBe(401);
  expect(relayed.headers['content-encoding']).toBeUndefined();
  expect(JSON.parse(text).error.message).toBe('Incorrect API key provided: [redacted]. See [redacted]');
});

it("counts a pass-through answer against the key's health like any attempt: 5 server errors in a row eject it", async () => {
  const call = async () => {
    const answer = await core.passthrough(request('/models'), undefined, {
      signal: new AbortController().signal,
    });
    for await (const _chunk of answer.body) {
      // drain
    }
    return answer.status;
  };
  expect(await call()).toBe(200);
  for (let index = 0; index < 5; index++) {
    fake.enqueue({ status: 500, json: { error: { message: 'down' } } });
    expect(await call()).toBe(500);
  }
  const [openai] = await core.health();
  expect(openai).toMatchObject({ provider: 'openai', state: 'failed' });
  expect(openai?.keys[0]?.state).toBe('failed');
});
