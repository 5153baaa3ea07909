// What the lane tests share: a lane service whose messages cross as JSON (bytes as base64; proto-loader's own
// decoding is covered by the router's and governance's tests), servers on free ports, clients over a replica
// pool, and a count of the messages each end received.
import { Client, type Server } from '@grpc/grpc-js';
import { TEST_GRPC_SECURITY, testGrpcClientSettings } from '@gw/testkit';
import { tokenInterceptor } from './grpc-security.ts';
import { startGrpcServer } from './grpc-server.ts';
import { LaneClient } from './lane-client.ts';
import { type LaneMethods, type LaneServerCall, serveLanes } from './lane-server.ts';
import type { LaneBatch } from './lane-wire.ts';
import { ReplicaPool } from './replica-pool.ts';

export type Answer = { text: string };
export type Chunk = { n: number };

/** The messages each end received, as the number of calls (or replies) each carried. */
export const wire = { requests: [] as number[], replies: [] as number[] };

export function clearWire(): void {
  wire.requests = [];
  wire.replies = [];
}

const serialize = (message: object) =>
  Buffer.from(
    JSON.stringify(message, (_key, value) =>
      value && value.type === 'Buffer' ? { base64: Buffer.from(value.data).toString('base64') } : value,
    ),
  );

const deserialize = (bytes: Buffer) =>
  JSON.parse(bytes.toString('utf8'), (_key, value) =>
    value && typeof value === 'object' && 'base64' in value
      ? Buffer.from(String(value.base64), 'base64')
      : value,
  );

/** Counts a received message into `into`: the messages of its batch, else one. */
function counted<Message>(into: number[], message: Message | LaneBatch<Message>): Message {
  const batch =
    (message as LaneBatch<Message>).kind === 'batch' ? (message as LaneBatch<Message>) : undefined;
  into.push(batch ? batch.batch.messages.length : 1);
  return message as Message;
}

const LANE = {
  path: '/gw.test.Lanes/Lane',
  requestStream: true,
  responseStream: true,
  requestSerialize: serialize,
  requestDeserialize: (bytes: Buffer) => counted(wire.requests, deserialize(bytes)),
  responseSerialize: serialize,
  responseDeserialize: (bytes: Buffer) => counted(wire.replies, deserialize(bytes)),
};

const started: Array<{ close(deadlineMs: number): Promise<void> }> = [];
const pools: Array<ReplicaPool<Client>> = [];

/** Stops what the test started: its clients' pools, then its servers. */
export async function stopAll(): Promise<void> {
  clearWire();
  for (const pool of pools.splice(0)) pool.close();
  await Promise.all(started.splice(0).map((server) => server.close(1_000)));
}

/** A test server on a free port, stopped by `stopAll`, with what `register` adds to it. */
async function startServer(register: (grpc: Server, draining: AbortSignal) => void) {
  const server = await startGrpcServer({
    port: 0,
    host: '127.0.0.1',
    security: TEST_GRPC_SECURITY,
    register: (grpc: Server, context) => register(grpc, context.draining),
  });
  started.push(server);
  return server;
}

/** A server whose lanes run `methods`; counts the lanes opened and ended on it. */
export async function startLaneServer(methods: LaneMethods<Answer, Chunk>) {
  const lanes = { opened: 0, ended: 0 };
  const server = await startServer((grpc, draining) => {
    const serve = serveLanes({ ...methods, draining });
    grpc.addService(
      { Lane: LANE },
      {
        Lane: (call: LaneServerCall<Answer, Chunk>) => {
          lanes.opened++;
          call.on('finish', () => lanes.ended++);
          serve(call);
        },
      },
    );
  });
  return { server, lanes, address: `127.0.0.1:${server.port}` };
}

/** A replica pool of test clients (the cluster token added) of `address`, closed by `stopAll`. */
function testPool(address: string, deadlineMs?: number): ReplicaPool<Client> {
  const pool = new ReplicaPool<Client>({
    ...testGrpcClientSettings(address),
    ...(deadlineMs && { deadlineMs }),
    create: (target, credentials, clientOptions) =>
      new Client(target, credentials, {
        ...clientOptions,
        interceptors: [tokenInterceptor(TEST_GRPC_SECURITY)],
      }),
  });
  pools.push(pool);
  return pool;
}

export function laneClient(address: string, options: { rotateMs?: number; deadlineMs?: number } = {}) {
  return new LaneClient<Client, Answer, Chunk>({
    pool: testPool(address, options.deadlineMs),
    open: (client) =>
      client.makeBidiStreamRequest(LANE.path, LANE.requestSerialize, LANE.responseDeserialize),
    ...(options.rotateMs && { rotateMs: options.rotateMs }),
  });
}

export const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const text = (json: Buffer) => JSON.parse(json.toString('utf8')) as { text: string; delayMs?: number };
export const ask = (value: { text: string; delayMs?: number }) => Buffer.from(JSON.stringify(value));
