// The gRPC server refuses a malformed or forged message before the core sees it: a settle with negative
// usage (which would give money back) is invalid_request, and the core is never called.
import { credentials, type ServiceError, status } from '@grpc/grpc-js';
import { startGrpcServer } from '@gw/shared/grpc';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GovernanceService } from '../core/governance-service.ts';
import { addGovernanceService, governanceGrpcService } from './governance-server.ts';

const calls: string[] = [];
const core: GovernanceService = {
  async authorize() {
    calls.push('authorize');
    return { targets: [] };
  },
  async settle() {
    calls.push('settle');
  },
  async manage() {
    calls.push('manage');
    return [];
  },
};

let server: Awaited<ReturnType<typeof startGrpcServer>>;
let client: InstanceType<ReturnType<typeof governanceGrpcService>>;

beforeAll(async () => {
  server = await startGrpcServer({
    port: 0,
    host: '127.0.0.1',
    register: (grpc) => addGovernanceService(grpc, core),
  });
  const Service = governanceGrpcService();
  client = new Service(`127.0.0.1:${server.port}`, credentials.createInsecure());
});

afterAll(async () => {
  client.close();
  await server.close(1_000);
});

function send(method: 'Authorize' | 'Settle' | 'Manage', json: string): Promise<ServiceError | undefined> {
  return new Promise((resolve) => {
    const invoke = (client as unknown as Record<string, (...args: unknown[]) => void>)[method]!.bind(client);
    invoke({ json: Buffer.from(json) }, (error: ServiceError | null) => resolve(error ?? undefined));
  });
}

const plan = {
  reservationId: 'r1',
  virtualKeyId: 'vk1',
  counters: [],
  providerCounters: {},
  alternativeProviders: ['openai'],
  estimate: {
    model: 'm',
    provider: 'openai',
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  },
};

describe('governance gRPC server', () => {
  it('refuses a settle with negative usage without calling the core', async () => {
    const error = await send(
      'Settle',
      JSON.stringify({
        requestId: 'x',
        settlement: plan,
        provider: 'openai',
        model: 'm',
        usage: { prompt_tokens: -1_000_000, completion_tokens: 0, total_tokens: -1_000_000 },
      }),
    );
    expect(error?.code).toBe(status.INVALID_ARGUMENT);
    expect(error?.details).toContain('usage.prompt_tokens');
    expect(calls).toEqual([]);
  });

  it('refuses bytes that are not JSON, and an authorize without a request id', async () => {
    expect((await send('Authorize', '{not json'))?.code).toBe(status.INVALID_ARGUMENT);
    const missing = await send('Authorize', JSON.stringify({ kind: 'llm', headerNames: [], targets: [] }));
    expect(missing?.code).toBe(status.INVALID_ARGUMENT);
    expect(missing?.details).toContain('requestId');
    expect(calls).toEqual([]);
  });

  it('passes a well-formed settle to the core', async () => {
    const usage = { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 };
    const error = await send(
      'Settle',
      JSON.stringify({ requestId: 'y', settlement: plan, provider: 'openai', model: 'm', usage }),
    );
    expect(error).toBeUndefined();
    expect(calls).toEqual(['settle']);
  });
});
