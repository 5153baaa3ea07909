// The gRPC server refuses a malformed or forged message before the core sees it: a settle with negative
// usage (which would give money back) is invalid_request, and the core is never called. The client validates
// what it decodes: a management answer of the wrong shape is a broken peer.
import { setTimeout } from 'node:timers/promises';
import { Client, credentials, type ServiceError, status } from '@grpc/grpc-js';
import { GatewayError, notFound } from '@gw/shared';
import { LaneClient, ReplicaPool, startGrpcServer, tokenInterceptor } from '@gw/shared/grpc';
import { TEST_GRPC_SECURITY, testGrpcClientSettings } from '@gw/testkit';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { ManageRequest, ManageResult, ManageResults } from '../core/governance-messages.ts';
import type { GovernanceService } from '../core/governance-service.ts';
import { GovernanceClient } from './governance-client.ts';
import { addGovernanceService, governanceGrpcService } from './governance-server.ts';

const calls: string[] = [];

/** Records what reaches the core; `get` answers a deletion, which is not what `get` answers. */
class RecordingCore implements GovernanceService {
  async authorize() {
    calls.push('authorize');
    return { targets: [] };
  }
  async settle() {
    calls.push('settle');
    return { cost: 0 };
  }
  manage<Request extends ManageRequest>(request: Request): Promise<ManageResults[Request['action']]>;
  async manage(request: ManageRequest): Promise<ManageResult> {
    calls.push(`manage ${request.action}`);
    return { deleted: request.collection };
  }
}

let server: Awaited<ReturnType<typeof startGrpcServer>>;
let client: Client;
let governance: GovernanceClient;
let pool: ReplicaPool<Client>;
/** Authorize and Settle calls on lanes, their JSON as a forged or broken peer could send it. */
let lanes: LaneClient<Client, { json: Buffer }>;

beforeAll(async () => {
  server = await startGrpcServer({
    port: 0,
    host: '127.0.0.1',
    register: (grpc, context) => addGovernanceService(grpc, new RecordingCore(), context),
    security: TEST_GRPC_SECURITY,
  });
  client = new Client(`127.0.0.1:${server.port}`, credentials.createInsecure(), {
    interceptors: [tokenInterceptor(TEST_GRPC_SECURITY)],
  });
  governance = new GovernanceClient(testGrpcClientSettings(`127.0.0.1:${server.port}`));
  pool = new ReplicaPool({
    ...testGrpcClientSettings(`127.0.0.1:${server.port}`),
    create: (target, channelCredentials, options) => new Client(target, channelCredentials, options),
  });
  const lane = governanceGrpcService().service['Lane']!;
  lanes = new LaneClient({
    pool,
    open: (stub) => stub.makeBidiStreamRequest(lane.path, lane.requestSerialize, lane.responseDeserialize),
  });
});

beforeEach(() => {
  calls.length = 0;
});

afterAll(async () => {
  client.close();
  governance.close();
  lanes.close();
  pool.close();
  await server.close(1_000);
});

/** Sends raw JSON bytes on a lane; the gateway error the server answered, if any. */
function onLane(method: 'Authorize' | 'Settle', json: string): Promise<GatewayError | undefined> {
  return lanes.call(method, Buffer.from(json), { deadlineMs: 5_000 }).then(
    () => undefined,
    (error: unknown) => {
      if (error instanceof GatewayError) return error;
      throw error;
    },
  );
}

/** Sends raw JSON bytes as a management call, as a forged or broken peer could. */
function send(method: 'Manage', json: string): Promise<ServiceError | undefined> {
  const definition = governanceGrpcService().service[method]!;
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      definition.path,
      definition.requestSerialize,
      definition.responseDeserialize,
      { json: Buffer.from(json) },
      (error) => resolve(error ?? undefined),
    );
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
    const error = await onLane(
      'Settle',
      JSON.stringify({
        requestId: 'x',
        settlement: plan,
        provider: 'openai',
        model: 'm',
        usage: { prompt_tokens: -1_000_000, completion_tokens: 0, total_tokens: -1_000_000 },
      }),
    );
    expect(error?.type).toBe('invalid_request');
    expect(error?.message).toContain('usage.prompt_tokens');
    expect(calls).toEqual([]);
  });

  it('refuses bytes that are not JSON, and an authorize without a request id', async () => {
    expect((await onLane('Authorize', '{not json'))?.type).toBe('invalid_request');
    const missing = await onLane('Authorize', JSON.stringify({ kind: 'llm', headerNames: [], targets: [] }));
    expect(missing?.type).toBe('invalid_request');
    expect(missing?.message).toContain('requestId');
    expect(calls).toEqual([]);
  });

  it('refuses a management request of an unknown action or without the id its action needs', async () => {
    const unknown = await send('Manage', JSON.stringify({ action: 'purge', collection: 'teams' }));
    expect(unknown?.code).toBe(status.INVALID_ARGUMENT);
    const noId = await send('Manage', JSON.stringify({ action: 'delete', collection: 'teams' }));
    expect(noId?.code).toBe(status.INVALID_ARGUMENT);
    expect(noId?.details).toContain('id');
    expect(calls).toEqual([]);
  });

  it('refuses a patch whose body is no object, and a delete whose cascade is no boolean', async () => {
    const replacing = await send(
      'Manage',
      JSON.stringify({ action: 'patch', collection: 'teams', id: 't1', body: ['whole'] }),
    );
    expect(replacing?.code).toBe(status.INVALID_ARGUMENT);
    expect(replacing?.details).toContain('body');
    const cascade = await send(
      'Manage',
      JSON.stringify({ action: 'delete', collection: 'teams', id: 't1', cascade: 'yes' }),
    );
    expect(cascade?.code).toBe(status.INVALID_ARGUMENT);
    expect(cascade?.details).toContain('cascade');
    expect(calls).toEqual([]);
    const patched = await send(
      'Manage',
      JSON.stringify({ action: 'patch', collection: 'teams', id: 't1', body: { name: null } }),
    );
    expect(patched).toBeUndefined();
    expect(calls).toEqual(['manage patch']);
  });

  it('passes a well-formed settle to the core', async () => {
    const usage = { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 };
    const error = await onLane(
      'Settle',
      JSON.stringify({ requestId: 'y', settlement: plan, provider: 'openai', model: 'm', usage }),
    );
    expect(error).toBeUndefined();
    expect(calls).toEqual(['settle']);
  });
});

describe('governance gRPC client', () => {
  it('returns a management answer of the shape its action promises', async () => {
    expect(await governance.manage({ action: 'delete', collection: 'teams', id: 't1' })).toEqual({
      deleted: 'teams',
    });
    expect(calls).toEqual(['manage delete']);
  });

  it('refuses an answer of another shape as a broken peer', async () => {
    const error = await governance
      .manage({ action: 'get', collection: 'teams', id: 't1' })
      .catch((thrown) => thrown);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ type: 'internal_error' });
    expect(error.message).toContain('malformed get answer');
  });
});

describe('governance gRPC client, a settle retried on another replica', () => {
  /** The reservation, as the store holds it: settled once, and not found by any settle after. */
  let settled = false;
  let settles = 0;
  /** A core whose settle charges at once but answers too late for the client's deadline. */
  class LateSettlingCore extends RecordingCore {
    override async settle() {
      settles++;
      if (settled) throw notFound('open reservation res_1 (settled already, or never made)');
      settled = true;
      await setTimeout(1_000);
      return { cost: 0.018 };
    }
  }
  const servers: Array<Awaited<ReturnType<typeof startGrpcServer>>> = [];
  let late: GovernanceClient;

  beforeAll(async () => {
    for (let index = 0; index < 2; index++) {
      servers.push(
        await startGrpcServer({
          port: 0,
          host: '127.0.0.1',
          register: (grpc, context) => addGovernanceService(grpc, new LateSettlingCore(), context),
          security: TEST_GRPC_SECURITY,
        }),
      );
    }
    const address = servers.map(({ port }) => `127.0.0.1:${port}`).join(',');
    late = new GovernanceClient({ ...testGrpcClientSettings(address), deadlineMs: 300 });
  });
  afterAll(async () => {
    late.close();
    for (const each of servers) await each.close(2_000);
  });

  it("fails with the first try's fault when the retry finds the reservation settled by it, not not_found", async () => {
    const error = await late
      .settle({
        requestId: '1',
        settlement: plan,
        provider: 'openai',
        model: 'm',
        usage: plan.estimate.usage,
      })
      .catch((thrown: unknown) => thrown);
    // Both tries reached a core: the first charged it and answered late, the retry found it settled. A not_found
    // here was logged by the ingress as a settle that failed and left to the sweeper; the settler's own retry
    // now finds the reservation gone, which it takes as settled.
    expect(settles).toBe(2);
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ type: 'service_unavailable', status: 503 });
    expect((error as GatewayError).message).toContain('did not answer in time');
  });
});
