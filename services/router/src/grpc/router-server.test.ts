// The router's gRPC server validates what it decodes: a malformed route request is invalid_request and
// never reaches the core.
import { credentials, type ServiceError, status } from '@grpc/grpc-js';
import { startGrpcServer, tokenInterceptor } from '@gw/shared/grpc';
import { TEST_GRPC_SECURITY, testGrpcClientSettings } from '@gw/testkit';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { CompletionRoute, EmbeddingsRoute, RouterService } from '../core/router-service.ts';
import { RouterClient } from './router-client.ts';
import { type RouterGrpcClient, routerGrpcClient } from './router-proto.ts';
import { addRouterService } from './router-server.ts';

const calls: string[] = [];
const core = {
  async complete() {
    calls.push('complete');
    throw new Error('not reached');
  },
  async patchProvider(name: string) {
    calls.push(`patch ${name}`);
    return { name };
  },
} as Pick<RouterService, 'complete' | 'patchProvider'> as RouterService;

let server: Awaited<ReturnType<typeof startGrpcServer>>;
let client: RouterGrpcClient;
/** Sends route requests as the ingress does: on lanes, serialized as they are, forged or not. */
let router: RouterClient;

beforeAll(async () => {
  server = await startGrpcServer({
    port: 0,
    host: '127.0.0.1',
    register: (grpc, context) => addRouterService(grpc, core, context),
    security: TEST_GRPC_SECURITY,
  });
  client = routerGrpcClient(`127.0.0.1:${server.port}`, credentials.createInsecure(), {
    interceptors: [tokenInterceptor(TEST_GRPC_SECURITY)],
  });
  router = new RouterClient(testGrpcClientSettings(`127.0.0.1:${server.port}`));
});

afterAll(async () => {
  router.close();
  await server.close(1_000);
});

const call = { signal: new AbortController().signal };

it.each([
  ['no targets', { requestId: 'r', operation: 'chat', targets: [], params: {}, messages: [] }, 'targets'],
  ['an unknown operation', { requestId: 'r', operation: 'rm', targets: [], params: {} }, 'operation'],
  [
    'a message without a role',
    {
      requestId: 'r',
      operation: 'chat',
      targets: [{ provider: 'openai', model: 'm' }],
      params: {},
      messages: [{ content: 'hi' }],
    },
    'messages.0.role',
  ],
])('refuses a route request with %s', async (_name, request, field) => {
  const error = await router.complete(request as unknown as CompletionRoute, call).catch((e: unknown) => e);
  expect(error).toMatchObject({ type: 'invalid_request', message: expect.stringContaining(field) });
  expect(calls).toEqual([]);
});

it('refuses a malformed stream or embeddings request before the core', async () => {
  const stream = router.stream({ requestId: 'r', operation: 'chat' } as unknown as CompletionRoute, call);
  await expect(stream.next()).rejects.toMatchObject({ type: 'invalid_request' });
  const request = {
    requestId: 'r',
    operation: 'embeddings',
    targets: [{ provider: 'openai', model: 'm' }],
    params: {},
  };
  const embedError = await router.embed(request as unknown as EmbeddingsRoute, call).catch((e: unknown) => e);
  expect(embedError).toMatchObject({ type: 'invalid_request', message: expect.stringContaining('input') });
  expect(calls).toEqual([]);
});

it('refuses a provider patch that is no JSON object (it would replace the whole config)', async () => {
  const patch = (json: string) =>
    new Promise<ServiceError | undefined>((resolve) => {
      client.PatchProvider({ name: 'openai', json: Buffer.from(json) }, {}, (failure) =>
        resolve(failure ?? undefined),
      );
    });
  expect((await patch('[1]'))?.code).toBe(status.INVALID_ARGUMENT);
  expect((await patch('null'))?.code).toBe(status.INVALID_ARGUMENT);
  expect(calls).toEqual([]);
  expect(await patch('{"network_config":{"timeout_ms":5}}')).toBeUndefined();
  expect(calls).toEqual(['patch openai']);
});
