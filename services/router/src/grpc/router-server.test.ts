// The router's gRPC server validates what it decodes: a malformed route request is invalid_request and
// never reaches the core.
import { credentials, type ServiceError, status } from '@grpc/grpc-js';
import { startGrpcServer } from '@gw/shared/grpc';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RouterService } from '../core/router-service.ts';
import { routerGrpcService } from './router-proto.ts';
import { addRouterService } from './router-server.ts';

const calls: string[] = [];
const core = {
  async complete() {
    calls.push('complete');
    throw new Error('not reached');
  },
} as Pick<RouterService, 'complete'> as RouterService;

let server: Awaited<ReturnType<typeof startGrpcServer>>;
let client: InstanceType<ReturnType<typeof routerGrpcService>>;

beforeAll(async () => {
  server = await startGrpcServer({
    port: 0,
    host: '127.0.0.1',
    register: (grpc) => addRouterService(grpc, core),
  });
  const Service = routerGrpcService();
  client = new Service(`127.0.0.1:${server.port}`, credentials.createInsecure());
});

afterAll(async () => {
  client.close();
  await server.close(1_000);
});

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
  const error = await new Promise<ServiceError | undefined>((resolve) => {
    (client as unknown as Record<string, (...args: unknown[]) => void>)['Complete']!.call(
      client,
      { json: Buffer.from(JSON.stringify(request)) },
      (failure: ServiceError | null) => resolve(failure ?? undefined),
    );
  });
  expect(error?.code).toBe(status.INVALID_ARGUMENT);
  expect(error?.details).toContain(field);
  expect(calls).toEqual([]);
});
