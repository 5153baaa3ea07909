// The router's gRPC client validates what it decodes and keeps the text it decoded, so ingress can write the
// bytes as they came. A core that hands the server ready JSON (`json`) lets the test forge a reply.
import {
  type ChatCompletionChunk,
  type CompletionResponse,
  GatewayError,
  UnansweredCallError,
} from '@gw/shared';
import { startGrpcServer } from '@gw/shared/grpc';
import { TEST_GRPC_SECURITY, testGrpcClientSettings } from '@gw/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CompletionRoute, RouterService, StreamItem } from '../core/router-service.ts';
import { RouterClient } from './router-client.ts';
import { routerGrpcService } from './router-proto.ts';
import { addRouterService } from './router-server.ts';

const response: CompletionResponse = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'hi' }, finish_reason: 'stop' }],
  model: 'gpt-4o-mini',
  created: 1,
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  extra_fields: { provider: 'openai', model_params: {}, latency: 0.001 },
};

const chunk = (content: string): ChatCompletionChunk => ({
  id: 'chatcmpl-1',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'gpt-4o-mini',
  choices: [{ index: 0, delta: { content }, finish_reason: null }],
});

/** What the fake core answers next: a served result with or without forged JSON (or a stream's `native`). */
let reply: { json?: string; native?: string } = {};
/** The route requests the fake core was called with, as the server decoded them. */
const received: CompletionRoute[] = [];

const core = {
  async complete(request: CompletionRoute) {
    received.push(request);
    return { response, provider: 'openai', ...reply };
  },
  async *stream(): AsyncGenerator<StreamItem> {
    const { native, ...rest } = reply;
    yield { chunk: chunk('a'), provider: 'openai', ...(native === undefined ? {} : { native }) };
    // A later chunk of the same upstream event: relayed already, so its own native is empty.
    yield { chunk: chunk('b'), ...rest, ...(native === undefined ? {} : { native: '' }) };
  },
} as Pick<RouterService, 'complete' | 'stream'> as RouterService;

const route: CompletionRoute = {
  requestId: 'r',
  operation: 'chat',
  targets: [{ provider: 'openai', model: 'gpt-4o-mini' }],
  params: {},
  messages: [{ role: 'user', content: 'hi' }],
};
const call = { signal: new AbortController().signal };

let server: Awaited<ReturnType<typeof startGrpcServer>>;
let client: RouterClient;

beforeAll(async () => {
  server = await startGrpcServer({
    port: 0,
    host: '127.0.0.1',
    register: (grpc, context) => addRouterService(grpc, core, context),
    security: TEST_GRPC_SECURITY,
  });
  client = new RouterClient(testGrpcClientSettings(`127.0.0.1:${server.port}`));
});

afterAll(async () => {
  client.close();
  await server.close(1_000);
});

it('answers the completion with the JSON text it decoded', async () => {
  reply = {};
  const result = await client.complete(route, call);
  expect(result.response).toEqual(response);
  expect(result.provider).toBe('openai');
  expect(result.json).toBe(JSON.stringify(response));
});

it('carries each target’s affinity to the router core (cache_affinity)', async () => {
  reply = {};
  received.length = 0;
  const targets = [
    { provider: 'openai', model: 'gpt-4o-mini', keyIds: ['k1', 'k2'], affinity: 'ab12cd34' },
    { provider: 'anthropic', model: 'claude-haiku-4-5' },
  ];
  await client.complete({ ...route, targets }, call);
  expect(received.map((request) => request.targets)).toEqual([targets]);
});

it('refuses a completion reply that fails its schema', async () => {
  reply = { json: JSON.stringify({ ...response, choices: 'none' }) };
  await expect(client.complete(route, call)).rejects.toMatchObject({
    type: 'internal_error',
    message: expect.stringContaining('malformed completion'),
  });
});

it('refuses a completion reply whose usage is not numbers: settlement charges it', async () => {
  reply = { json: JSON.stringify({ ...response, usage: { ...response.usage, prompt_tokens: '1' } }) };
  await expect(client.complete(route, call)).rejects.toMatchObject({
    type: 'internal_error',
    message: expect.stringContaining('malformed completion'),
  });
});

it('streams typed chunks, the provider on the first, each with its JSON text', async () => {
  reply = {};
  const items: StreamItem[] = [];
  for await (const item of client.stream(route, call)) items.push(item);
  expect(items.map((item) => item.chunk.choices[0]?.delta?.content)).toEqual(['a', 'b']);
  expect(items.map((item) => item.provider)).toEqual(['openai', undefined]);
  expect(items[1]?.json).toBe(JSON.stringify(chunk('b')));
});

it('streams on the lane from a client’s first call: the router serves completions on lanes only', async () => {
  reply = {};
  const unary = ['Complete', 'Embed', 'Stream'].filter((name) => name in routerGrpcService().service);
  expect(unary).toEqual([]);
  const fresh = new RouterClient(testGrpcClientSettings(`127.0.0.1:${server.port}`));
  try {
    const items: StreamItem[] = [];
    for await (const item of fresh.stream(route, call)) items.push(item);
    expect(items.map((item) => item.chunk.choices[0]?.delta?.content)).toEqual(['a', 'b']);
  } finally {
    fresh.close();
  }
});

it('keeps a relayed stream’s empty native apart from a translated chunk (issue 27)', async () => {
  reply = { native: 'data: {"candidates":[]}\n\n' };
  const relayed: StreamItem[] = [];
  for await (const item of client.stream(route, call)) relayed.push(item);
  expect(relayed.map((item) => item.native)).toEqual(['data: {"candidates":[]}\n\n', '']);

  reply = {};
  const translated: StreamItem[] = [];
  for await (const item of client.stream(route, call)) translated.push(item);
  expect(translated.map((item) => item.native)).toEqual([undefined, undefined]);
});

it('ends a stream whose chunk fails its schema with a typed error', async () => {
  reply = { json: '{"id":1}' };
  const read = async () => {
    for await (const _item of client.stream(route, call)) {
      // drained for the error
    }
  };
  await expect(read()).rejects.toMatchObject({
    type: 'internal_error',
    message: expect.stringContaining('malformed stream chunk'),
  });
});

it('ends a stream whose chunk carries a usage that is not one with a typed error', async () => {
  reply = { json: JSON.stringify({ ...chunk('b'), usage: { prompt_tokens: 1 } }) };
  const read = async () => {
    for await (const _item of client.stream(route, call)) {
      // drained for the error
    }
  };
  await expect(read()).rejects.toMatchObject({
    type: 'internal_error',
    message: expect.stringContaining('malformed stream chunk'),
  });
});

it('answers a plain 503 for a call no router replica could take, not an unanswered call to be charged', async () => {
  // Nothing listens on port 1: the call is never sent.
  const unreachable = new RouterClient({ ...testGrpcClientSettings('127.0.0.1:1'), deadlineMs: 200 });
  try {
    const failure = await unreachable.complete(route, call).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GatewayError);
    expect(failure).not.toBeInstanceOf(UnansweredCallError);
    expect(failure).toMatchObject({
      type: 'service_unavailable',
      message: 'no router replica could take the call',
    });
  } finally {
    unreachable.close();
  }
});
