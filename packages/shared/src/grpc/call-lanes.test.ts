// Lanes: many calls as messages on one stream per replica. Each caller gets its own answer whatever the order
// the server answers in; errors, cancellation and deadlines reach both ends as a unary call's would; a lane is
// replaced after its rotation period; a draining replica finishes the calls it has and the ones it refuses
// run on another replica, once.
import { Client, type Server, type ServerDuplexStream, status } from '@grpc/grpc-js';
import { TEST_GRPC_SECURITY, testGrpcClientSettings, waitFor } from '@gw/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { GatewayError, invalidRequest } from '../errors/gateway-error.ts';
import {
  LaneClient,
  type LaneHandler,
  type LaneReply,
  type LaneRequest,
  type LaneStreams,
  serveLanes,
  type UnaryFallback,
} from './call-lanes.ts';
import { tokenInterceptor } from './grpc-security.ts';
import { startGrpcServer } from './grpc-server.ts';
import { ReplicaPool } from './replica-pool.ts';

/** LaneRequest and LaneReply as JSON (bytes as base64), with the defaults proto-loader fills in. */
const serialize = (message: Record<string, unknown>) =>
  Buffer.from(
    JSON.stringify(message, (_key, value) =>
      value && value.type === 'Buffer' ? { base64: Buffer.from(value.data).toString('base64') } : value,
    ),
  );
const bytesOf = (value: unknown) =>
  value && typeof value === 'object' && 'base64' in value
    ? Buffer.from(String((value as { base64: string }).base64), 'base64')
    : Buffer.alloc(0);
const LANE = {
  path: '/gw.test.Lanes/Lane',
  requestStream: true,
  responseStream: true,
  requestSerialize: serialize,
  requestDeserialize: (bytes: Buffer): LaneRequest => {
    const request = laneRequest(JSON.parse(bytes.toString('utf8')));
    wire.requests.push(request.batch?.length || 1);
    return request;
  },
  responseSerialize: serialize,
  responseDeserialize: (bytes: Buffer) => {
    const reply = laneReply(JSON.parse(bytes.toString('utf8')));
    wire.replies.push(reply.batch?.length || 1);
    return reply;
  },
};

/** The messages each end received, as the number of calls (or replies) each carried. */
const wire = { requests: [] as number[], replies: [] as number[] };
const clearWire = () => {
  wire.requests = [];
  wire.replies = [];
};

function laneRequest(raw: Record<string, unknown>): LaneRequest {
  return {
    id: Number(raw['id'] ?? 0),
    method: String(raw['method'] ?? ''),
    json: bytesOf(raw['json']),
    traceparent: String(raw['traceparent'] ?? ''),
    tracestate: String(raw['tracestate'] ?? ''),
    cancel: !!raw['cancel'],
    credit: Number(raw['credit'] ?? 0),
    batch: ((raw['batch'] as Array<Record<string, unknown>> | undefined) ?? []).map(laneRequest),
  };
}

function laneReply(raw: Record<string, unknown>): LaneReply<Answer, Chunk> {
  return {
    id: Number(raw['id'] ?? 0),
    answer: (raw['answer'] as Answer | undefined) ?? null,
    error: bytesOf(raw['error']),
    draining: !!raw['draining'],
    chunk: (raw['chunk'] as Chunk | undefined) ?? null,
    done: !!raw['done'],
    batch: ((raw['batch'] as Array<Record<string, unknown>> | undefined) ?? []).map(laneReply),
  };
}

type Answer = { text: string };
type Chunk = { n: number };
const started: Array<{ close(deadlineMs: number): Promise<void> }> = [];
const pools: Array<ReplicaPool<Client>> = [];

/** A test server on a free port, stopped after the test, with what `register` adds to it. */
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

/** A server whose lanes run `handler` (and `streams`, when given); counts the lanes opened and ended on it. */
async function startLaneServer(handler: LaneHandler<Answer>, streams?: LaneStreams<Chunk>) {
  const lanes = { opened: 0, ended: 0 };
  const server = await startServer((grpc, draining) => {
    const serve = serveLanes(handler, draining, streams);
    grpc.addService(
      { Lane: LANE },
      {
        Lane: (call: ServerDuplexStream<LaneRequest, Partial<LaneReply<Answer, Chunk>>>) => {
          lanes.opened++;
          call.on('finish', () => lanes.ended++);
          serve(call);
        },
      },
    );
  });
  return { server, lanes, address: `127.0.0.1:${server.port}` };
}

/** A unary method of a replica from before lanes. */
const ECHO = {
  path: '/gw.test.Lanes/Echo',
  requestStream: false,
  responseStream: false,
  requestSerialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  requestDeserialize: (bytes: Buffer) => JSON.parse(bytes.toString('utf8')),
  responseSerialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  responseDeserialize: (bytes: Buffer) => JSON.parse(bytes.toString('utf8')) as Answer,
};

function laneClient(
  address: string,
  options: { rotateMs?: number; deadlineMs?: number; unary?: UnaryFallback<Client, Answer> } = {},
) {
  const pool = new ReplicaPool<Client>({
    ...testGrpcClientSettings(address),
    ...(options.deadlineMs && { deadlineMs: options.deadlineMs }),
    create: (target, credentials, clientOptions) =>
      new Client(target, credentials, {
        ...clientOptions,
        interceptors: [tokenInterceptor(TEST_GRPC_SECURITY)],
      }),
  });
  pools.push(pool);
  return new LaneClient<Client, Answer, Chunk>({
    pool,
    open: (client, headers) =>
      client.makeBidiStreamRequest(LANE.path, LANE.requestSerialize, LANE.responseDeserialize, headers),
    ...(options.rotateMs && { rotateMs: options.rotateMs }),
    ...(options.unary && { unary: options.unary }),
  });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (json: Buffer) => JSON.parse(json.toString('utf8')) as { text: string; delayMs?: number };
const ask = (value: { text: string; delayMs?: number }) => Buffer.from(JSON.stringify(value));

afterEach(async () => {
  clearWire();
  for (const pool of pools.splice(0)) pool.close();
  await Promise.all(started.splice(0).map((server) => server.close(1_000)));
});

describe('lanes', () => {
  it('answer 200 concurrent calls on one stream, each with its own answer, whatever the order', async () => {
    const { lanes, address } = await startLaneServer(async (method, json) => {
      const request = text(json);
      await pause(request.delayMs ?? 0);
      return { text: `${method}:${request.text}` };
    });
    const client = laneClient(address);
    const answers = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        client.call('Echo', ask({ text: `n${index}`, delayMs: (index * 7) % 20 }), { deadlineMs: 5_000 }),
      ),
    );
    expect(answers).toEqual(Array.from({ length: 200 }, (_, index) => ({ text: `Echo:n${index}` })));
    expect(lanes.opened).toBe(1);
  });

  it("carry the server's gateway error as that error, and an internal error for anything else", async () => {
    const { address } = await startLaneServer(async (_method, json) => {
      if (text(json).text === 'bad') throw invalidRequest("'model' is required");
      throw new TypeError('a bug that must not leak');
    });
    const client = laneClient(address);
    const refused = await client.call('Echo', ask({ text: 'bad' }), { deadlineMs: 5_000 }).catch((e) => e);
    expect(refused).toBeInstanceOf(GatewayError);
    expect(refused).toMatchObject({ type: 'invalid_request', status: 400, message: "'model' is required" });
    const broken = await client.call('Echo', ask({ text: 'bug' }), { deadlineMs: 5_000 }).catch((e) => e);
    expect(broken).toMatchObject({ type: 'internal_error', status: 500 });
    expect(broken.message).not.toContain('must not leak');
  });

  it('cancel one call when its caller goes away: the handler sees the abort, the other calls go on', async () => {
    const aborted: string[] = [];
    const { address } = await startLaneServer(async (_method, json, { signal }) => {
      const request = text(json);
      signal.addEventListener('abort', () => aborted.push(request.text));
      await pause(request.delayMs ?? 0);
      return { text: request.text };
    });
    const client = laneClient(address);
    const caller = new AbortController();
    const gone = client.call('Echo', ask({ text: 'gone', delayMs: 2_000 }), {
      deadlineMs: 5_000,
      signal: caller.signal,
    });
    const stays = client.call('Echo', ask({ text: 'stays', delayMs: 300 }), { deadlineMs: 5_000 });
    await pause(100);
    caller.abort();
    await expect(gone).rejects.toMatchObject({ type: 'cancelled' });
    await expect(stays).resolves.toEqual({ text: 'stays' });
    await waitFor(() => aborted.includes('gone'), { timeoutMs: 2_000, what: 'the abort on the server' });
    expect(aborted).toEqual(['gone']);
  });

  it('fail a call past its deadline as DEADLINE_EXCEEDED, and abort it on the server', async () => {
    let serverSignal: AbortSignal | undefined;
    const { address } = await startLaneServer(async (_method, _json, { signal }) => {
      serverSignal = signal;
      await pause(5_000);
      return { text: 'late' };
    });
    const client = laneClient(address);
    const failure = await client.call('Echo', ask({ text: 'slow' }), { deadlineMs: 200 }).catch((e) => e);
    expect(failure).toMatchObject({ code: status.DEADLINE_EXCEEDED });
    await waitFor(() => serverSignal?.aborted === true, { timeoutMs: 2_000, what: 'the cancel message' });
  });

  it('replace a lane after its rotation period; the old one ends once its calls are answered', async () => {
    const { lanes, address } = await startLaneServer(async (_method, json) => {
      const request = text(json);
      await pause(request.delayMs ?? 0);
      return { text: request.text };
    });
    const client = laneClient(address, { rotateMs: 200 });
    const long = client.call('Echo', ask({ text: 'long', delayMs: 600 }), { deadlineMs: 5_000 });
    await pause(300);
    await expect(client.call('Echo', ask({ text: 'next' }), { deadlineMs: 5_000 })).resolves.toEqual({
      text: 'next',
    });
    expect(lanes.opened).toBe(2);
    expect(lanes.ended).toBe(0);
    await expect(long).resolves.toEqual({ text: 'long' });
    await waitFor(() => lanes.ended === 1, { timeoutMs: 2_000, what: 'the old lane to end' });
  });

  it('send calls as unary calls to a replica that serves no lanes (an older version, mid-upgrade)', async () => {
    // A replica of before lanes: its server has no Lane method, so a lane is refused with UNIMPLEMENTED.
    const server = await startServer((grpc) =>
      grpc.addService(
        { Echo: ECHO },
        {
          Echo: (call: { request: { text: string } }, callback: (e: null, r: Answer) => void) =>
            callback(null, { text: `unary:${call.request.text}` }),
        },
      ),
    );
    const unaryCalls: string[] = [];
    const client = laneClient(`127.0.0.1:${server.port}`, {
      unary: ({ stub }, _method, json) =>
        new Promise<Answer>((resolve, reject) => {
          unaryCalls.push(text(json).text);
          stub.makeUnaryRequest(
            ECHO.path,
            ECHO.requestSerialize,
            ECHO.responseDeserialize,
            { text: text(json).text },
            (error: Error | null, reply?: Answer) => (error ? reject(error) : resolve(reply!)),
          );
        }),
    });
    const answers = await Promise.all(
      ['one', 'two', 'three'].map((value) =>
        client.call('Echo', ask({ text: value }), { deadlineMs: 5_000 }),
      ),
    );
    expect(answers).toEqual([{ text: 'unary:one' }, { text: 'unary:two' }, { text: 'unary:three' }]);
    expect(await client.call('Echo', ask({ text: 'four' }), { deadlineMs: 5_000 })).toEqual({
      text: 'unary:four',
    });
    expect(unaryCalls.sort()).toEqual(['four', 'one', 'three', 'two']);
  });

  it('let a draining replica finish its calls and send the ones it refuses to another replica', async () => {
    const ran: string[] = [];
    const handler =
      (name: string): LaneHandler<Answer> =>
      async (_method, json) => {
        const request = text(json);
        ran.push(`${name}:${request.text}`);
        await pause(request.delayMs ?? 0);
        return { text: `${name}:${request.text}` };
      };
    const first = await startLaneServer(handler('a'));
    const second = await startLaneServer(handler('b'));
    const client = laneClient(`${first.address},${second.address}`);
    // Both replicas get a lane, and one long call each.
    const long = [
      client.call('Echo', ask({ text: 'long1', delayMs: 800 }), { deadlineMs: 5_000 }),
      client.call('Echo', ask({ text: 'long2', delayMs: 800 }), { deadlineMs: 5_000 }),
    ];
    await pause(100);
    const drained = first.server.close(5_000);
    await pause(50);
    const after = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        client.call('Echo', ask({ text: `after${index}` }), { deadlineMs: 5_000 }),
      ),
    );
    // Round-robin gave one long call to each replica; each finished where it ran.
    expect((await Promise.all(long)).map((answer) => answer.text[0]).sort()).toEqual(['a', 'b']);
    expect(after.every((answer) => answer.text.startsWith('b:'))).toBe(true);
    expect(ran.filter((entry) => entry.startsWith('a:after'))).toEqual([]);
    expect(ran.filter((entry) => entry.startsWith('b:after'))).toHaveLength(10);
    await drained;
    expect(first.lanes.ended).toBe(first.lanes.opened);
  });
});

describe('batches on lanes', () => {
  /** A server whose handler answers every call at once when `release` is called (the answers of one turn). */
  async function gatedServer() {
    let open!: () => void;
    let gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const server = await startLaneServer(async (_method, json) => {
      await gate;
      return { text: text(json).text };
    });
    return {
      ...server,
      release: () => {
        open();
        gate = new Promise<void>((resolve) => {
          open = resolve;
        });
      },
    };
  }

  /**
   * A gated server and a client whose lane is open: its first call answered, so the server's headers (that it
   * reads batches) have arrived; the wire is counted from there.
   */
  async function openLane() {
    const server = await gatedServer();
    const client = laneClient(server.address);
    const first = client.call('Echo', ask({ text: 'first' }), { deadlineMs: 5_000 });
    await waitFor(() => wire.requests.length === 1, { timeoutMs: 2_000, what: 'the first call' });
    server.release();
    await expect(first).resolves.toEqual({ text: 'first' });
    clearWire();
    return { client, release: server.release };
  }

  /** Waits until the server has taken `count` calls, however they were batched. */
  const taken = (count: number) =>
    waitFor(() => wire.requests.reduce((sum, n) => sum + n, 0) === count, {
      timeoutMs: 2_000,
      what: `the ${count} calls on the server`,
    });

  it('send the calls of one turn as one message, and their replies as one, each caller with its own answer', async () => {
    const { client, release } = await openLane();
    const calls = Array.from({ length: 30 }, (_, index) =>
      client.call('Echo', ask({ text: `n${index}` }), { deadlineMs: 5_000 }),
    );
    await taken(30);
    release();
    expect(await Promise.all(calls)).toEqual(
      Array.from({ length: 30 }, (_, index) => ({ text: `n${index}` })),
    );
    expect(wire.requests).toEqual([30]);
    expect(wire.replies).toEqual([30]);
  });

  it('keep a batch under a MiB: calls larger together go in more than one message, in order', async () => {
    const { client, release } = await openLane();
    const big = (index: number) => `${index}`.padEnd(300 * 1024, 'x');
    const calls = Array.from({ length: 5 }, (_, index) =>
      client.call('Echo', ask({ text: big(index) }), { deadlineMs: 5_000 }),
    );
    await taken(5);
    release();
    expect((await Promise.all(calls)).map((answer) => answer.text)).toEqual([0, 1, 2, 3, 4].map(big));
    // 300 KiB each: three fit in a MiB, the fourth starts the next message.
    expect(wire.requests).toEqual([3, 2]);
  });

  it('send one message a call to a server that does not say it reads batches (an older version)', async () => {
    // A lane server of before batches: it answers each call as it comes, and its headers name no batches.
    const server = await startServer((grpc) =>
      grpc.addService(
        { Lane: LANE },
        {
          Lane: (call: ServerDuplexStream<LaneRequest, Partial<LaneReply<Answer, Chunk>>>) => {
            call.on('data', (request: LaneRequest) =>
              call.write({ id: request.id, answer: { text: `old:${text(request.json).text}` } }),
            );
            call.on('end', () => call.end());
          },
        },
      ),
    );
    const client = laneClient(`127.0.0.1:${server.port}`);
    await client.call('Echo', ask({ text: 'first' }), { deadlineMs: 5_000 });
    clearWire();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        client.call('Echo', ask({ text: `n${index}` }), { deadlineMs: 5_000 }),
      ),
    );
    expect(answers).toEqual(Array.from({ length: 10 }, (_, index) => ({ text: `old:n${index}` })));
    expect(wire.requests).toEqual(Array(10).fill(1));
  });

  it('answer a client that does not say it reads batches (an older version) one message a reply', async () => {
    const { address, release } = await gatedServer();
    const pool = new ReplicaPool<Client>({
      ...testGrpcClientSettings(address),
      create: (target, credentials, clientOptions) =>
        new Client(target, credentials, {
          ...clientOptions,
          interceptors: [tokenInterceptor(TEST_GRPC_SECURITY)],
        }),
    });
    pools.push(pool);
    const { stub } = await pool.connected(new Set());
    // The lane call of before batches: no headers of its own.
    const lane = stub.makeBidiStreamRequest(LANE.path, LANE.requestSerialize, LANE.responseDeserialize);
    const answered: string[] = [];
    lane.on('data', (reply: LaneReply<Answer, Chunk>) => {
      if (reply.answer) answered.push(reply.answer.text);
    });
    for (let id = 1; id <= 10; id++) lane.write({ id, method: 'Echo', json: ask({ text: `n${id}` }) });
    await waitFor(() => wire.requests.length === 10, {
      timeoutMs: 2_000,
      what: 'the 10 calls on the server',
    });
    release();
    await waitFor(() => answered.length === 10, { timeoutMs: 2_000, what: 'the 10 replies' });
    lane.end();
    expect(answered.sort()).toEqual(Array.from({ length: 10 }, (_, index) => `n${index + 1}`).sort());
    expect(wire.replies).toEqual(Array(10).fill(1));
  });
});

/** A streaming method whose request names how many chunks to send, and after which one to fail. */
function countingStreams(log: { produced: Map<string, number>; closed: string[] }): LaneStreams<Chunk> {
  return {
    methods: new Set(['Count']),
    run: async function* (_method, json, { signal }) {
      const request = JSON.parse(json.toString('utf8')) as { text: string; count: number; failAt?: number };
      try {
        for (let n = 0; n < request.count; n++) {
          if (signal.aborted) return;
          if (n === request.failAt) throw invalidRequest(`failed at ${n}`);
          log.produced.set(request.text, n + 1);
          yield { n };
          await pause(0);
        }
      } finally {
        log.closed.push(request.text);
      }
    },
  };
}

const countRequest = (text: string, count: number, failAt?: number) =>
  Buffer.from(JSON.stringify({ text, count, ...(failAt !== undefined && { failAt }) }));

/** Reads a lane stream to its end (or the end of `limit` chunks). */
async function readAll(chunks: AsyncIterable<Chunk>, limit = Number.POSITIVE_INFINITY): Promise<number[]> {
  const seen: number[] = [];
  for await (const chunk of chunks) {
    seen.push(chunk.n);
    if (seen.length >= limit) break;
  }
  return seen;
}

describe('streaming calls on lanes', () => {
  const noFallback = () => {
    throw new Error('the fallback ran on a replica whose lanes run streams');
  };
  const ready = async (client: LaneClient<Client, Answer, Chunk>) => {
    // The first call opens the lane; its headers (which say the server runs streams) come with it.
    await client.call('Echo', ask({ text: 'open' }), { deadlineMs: 5_000 });
  };
  const echo: LaneHandler<Answer> = async (_method, json) => ({ text: text(json).text });

  it('carry 50 concurrent streams on one lane, each with its chunks in order', async () => {
    const log = { produced: new Map<string, number>(), closed: [] as string[] };
    const { lanes, address } = await startLaneServer(echo, countingStreams(log));
    const client = laneClient(address);
    await ready(client);
    const streams = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        readAll(
          client.stream('Count', countRequest(`s${index}`, 40 + index), { deadlineMs: 5_000 }, noFallback),
        ),
      ),
    );
    streams.forEach((seen, index) => {
      expect(seen).toEqual(Array.from({ length: 40 + index }, (_, n) => n));
    });
    expect(lanes.opened).toBe(1);
    expect(log.closed).toHaveLength(50);
  });

  it('hold a reader that does not read to its window, without holding the other streams of the lane', async () => {
    const log = { produced: new Map<string, number>(), closed: [] as string[] };
    const { address } = await startLaneServer(echo, countingStreams(log));
    const client = laneClient(address);
    await ready(client);
    const slow = client.stream('Count', countRequest('slow', 200), { deadlineMs: 10_000 }, noFallback);
    const first = await slow.next();
    expect(first.value).toEqual({ n: 0 });
    // The fast stream on the same lane runs to its end while the slow one is not read.
    const fast = await readAll(
      client.stream('Count', countRequest('fast', 200), { deadlineMs: 10_000 }, noFallback),
    );
    expect(fast).toHaveLength(200);
    await pause(100);
    // The slow one was granted 16 chunks: its server made at most those and the one it waits to send.
    expect(log.produced.get('slow')).toBeLessThanOrEqual(17);
    expect(log.produced.get('slow')).toBeGreaterThanOrEqual(16);
    // Read now, it comes whole and in order.
    const rest = await readAll(slow);
    expect([0, ...rest]).toEqual(Array.from({ length: 200 }, (_, n) => n));
  });

  it("end with the server's gateway error after the chunks sent before it", async () => {
    const log = { produced: new Map<string, number>(), closed: [] as string[] };
    const { address } = await startLaneServer(echo, countingStreams(log));
    const client = laneClient(address);
    await ready(client);
    const seen: number[] = [];
    const failure = await (async () => {
      for await (const chunk of client.stream(
        'Count',
        countRequest('bad', 10, 3),
        { deadlineMs: 5_000 },
        noFallback,
      ))
        seen.push(chunk.n);
    })().catch((error: unknown) => error);
    expect(seen).toEqual([0, 1, 2]);
    expect(failure).toBeInstanceOf(GatewayError);
    expect(failure).toMatchObject({ type: 'invalid_request', message: 'failed at 3' });
  });

  it('stop the server side of a stream its reader leaves early, or whose caller goes away', async () => {
    const log = { produced: new Map<string, number>(), closed: [] as string[] };
    const { address } = await startLaneServer(echo, countingStreams(log));
    const client = laneClient(address);
    await ready(client);
    expect(
      await readAll(
        client.stream('Count', countRequest('left', 1_000), { deadlineMs: 5_000 }, noFallback),
        5,
      ),
    ).toEqual([0, 1, 2, 3, 4]);
    await waitFor(() => log.closed.includes('left'), { timeoutMs: 2_000, what: 'the left stream to stop' });
    expect(log.produced.get('left')).toBeLessThan(40);

    const caller = new AbortController();
    const gone = client.stream(
      'Count',
      countRequest('gone', 1_000),
      { deadlineMs: 5_000, signal: caller.signal },
      noFallback,
    );
    await gone.next();
    caller.abort();
    await expect(readAll(gone)).rejects.toMatchObject({ type: 'cancelled' });
    await waitFor(() => log.closed.includes('gone'), { timeoutMs: 2_000, what: 'the gone stream to stop' });
    // The lane still carries calls.
    expect(
      await readAll(client.stream('Count', countRequest('after', 3), { deadlineMs: 5_000 }, noFallback)),
    ).toEqual([0, 1, 2]);
  });

  it("run a stream as the fallback's call on a replica whose lanes run none (an older version)", async () => {
    const { address } = await startLaneServer(echo);
    const client = laneClient(address);
    await ready(client);
    const fallbacks: string[] = [];
    const seen = await readAll(
      client.stream('Count', countRequest('old', 3), { deadlineMs: 5_000 }, async function* ({ target }) {
        fallbacks.push(target);
        yield { n: 7 };
      }),
    );
    expect(seen).toEqual([7]);
    expect(fallbacks).toEqual([address]);
  });

  it('send a stream a draining replica refuses to another replica', async () => {
    const logs = [0, 1].map(() => ({ produced: new Map<string, number>(), closed: [] as string[] }));
    const first = await startLaneServer(echo, countingStreams(logs[0]!));
    const second = await startLaneServer(echo, countingStreams(logs[1]!));
    const client = laneClient(`${first.address},${second.address}`);
    // A lane to each replica; a call sent as the drain starts, which may reach a lane its server is ending (it
    // had nothing running): it never ran there, and is answered by the other replica, not failed.
    await Promise.all([ready(client), ready(client)]);
    const racing = client.call('Echo', ask({ text: 'racing', delayMs: 300 }), { deadlineMs: 5_000 });
    const drained = first.server.close(5_000);
    await pause(50);
    const seen = await Promise.all(
      Array.from({ length: 4 }, (_, index) =>
        readAll(client.stream('Count', countRequest(`d${index}`, 3), { deadlineMs: 5_000 }, noFallback)),
      ),
    );
    expect(seen).toEqual(Array.from({ length: 4 }, () => [0, 1, 2]));
    expect(logs[0]!.closed).toEqual([]);
    expect(logs[1]!.closed.sort()).toEqual(['d0', 'd1', 'd2', 'd3']);
    await expect(racing).resolves.toEqual({ text: 'racing' });
    await drained;
  });
});
