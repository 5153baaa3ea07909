import { type ClientDuplexStream, Metadata, type ServerDuplexStream, status } from '@grpc/grpc-js';
import {
  decodeGatewayError,
  encodeGatewayError,
  GatewayError,
  internalError,
  requestCancelled,
  serviceUnavailable,
} from '../errors/gateway-error.ts';
import type { TraceContext } from '../tracing/tracer.ts';
import type { ReplicaPool, WatchedCall } from './replica-pool.ts';
import { traceOfFields } from './trace-metadata.ts';

/**
 * Lanes: short calls as messages on one long-lived bidirectional stream per replica. A grpc-js unary call
 * costs its two ends about 150–200 µs of CPU (a stream, headers, metadata, a deadline, trailers); a message on
 * a stream that is already open costs about 35 µs. A governed request makes a call on every hop, so that is
 * most of what a cluster adds to it (docs/architecture.md "Lanes").
 *
 * The wire (proto/router.proto `Lane`): the client numbers each call on a lane; the server answers with the
 * same number, in any order. A call the caller abandons is cancelled by a message. The client retires a lane
 * after ROTATE_MS (it ends the stream once the lane's calls are answered), so a lane never outlives the
 * connection it runs on by more than that (servers close connections past their maximum age, and a stream
 * opened on an old connection keeps only the grace period). A server that drains says so; calls it refuses
 * then did not run, and are sent to another replica.
 *
 * Streaming calls (a server that names them in its lane's headers, STREAMS_HEADER) ride lanes too: their
 * chunks come back as messages with the call's number, then one that says it is done (or an error). Many
 * calls share the lane's HTTP/2 stream, so one whose reader is slow must not hold the others up: the server
 * sends a call at most as many chunks as its client granted (STREAM_WINDOW at the start, more as the reader
 * takes them), and the client keeps at most that many per call, so the lane itself never waits for a reader.
 *
 * Batches: each message on a stream costs grpc-js and HTTP/2 a fixed amount at both ends (a frame, a protobuf
 * envelope, a write through Node's stream machinery, a read and a decode), about as much as the bytes of a
 * small call. The messages one end sends in one turn of its event loop therefore go as one message (`batch`)
 * when the other end said in its headers that it reads them (BATCHES_HEADER), as a batched Redis script does
 * for admissions: a message alone goes as it is, and nothing waits longer than the turn it was sent in.
 */

/** A call on a lane, as proto-loader decodes LaneRequest (defaults filled). */
export interface LaneRequest {
  id: number;
  method: string;
  json: Buffer;
  traceparent: string;
  tracestate: string;
  cancel: boolean;
  /** More chunks the client takes of streaming call `id` (with its method: the first grant). */
  credit?: number;
  /** Set alone: the calls of one turn, in order (a peer that reads batches: BATCHES_HEADER). */
  batch?: LaneRequest[];
}

/** The answer to a call, as proto-loader decodes LaneReply; `answer` is the service's own message. */
export interface LaneReply<Answer, Chunk = never> {
  id: number;
  answer: Answer | null;
  error: Buffer;
  draining: boolean;
  /** One chunk of streaming call `id`. */
  chunk?: Chunk | null;
  /** Streaming call `id` ended well. */
  done?: boolean;
  /** Set alone: the replies of one turn, in order (a peer that reads batches: BATCHES_HEADER). */
  batch?: Array<LaneReply<Answer, Chunk>>;
}

/** The header of a lane's answer by which a server says it runs streaming calls on it. */
const STREAMS_HEADER = 'gw-lane-streams';
/** The header by which each end of a lane says it reads batched messages (the client's call, the server's answer). */
const BATCHES_HEADER = 'gw-lane-batches';
/** Most messages one batch carries, and the bytes past which a batch goes at once (a larger message goes alone). */
const BATCH_LIMIT = 64;
const BATCH_BYTES = 1024 * 1024;
/**
 * Chunks a streaming call may have sent and its reader not yet taken; half of it is granted again each time
 * the reader has taken that many. What a lane holds for one slow reader is bounded by it.
 */
const STREAM_WINDOW = 16;

/** How long a lane takes new calls; then it ends once those it has are answered. */
const ROTATE_MS = 5_000;
/** How long a replica that serves no lanes gets unary calls before a lane is tried on it again. */
const WITHOUT_LANES_MS = 60_000;

/** A call as a unary call on one replica's stub (UNIMPLEMENTED lanes: see LaneClient's `unary`). */
export type UnaryFallback<Stub, Answer> = (
  replica: { stub: Stub; target: string },
  method: string,
  json: Buffer,
  options: { signal?: AbortSignal | undefined; trace?: TraceContext | undefined; deadlineMs: number },
) => Promise<Answer>;
/** Call ids wrap here (uint32 on the wire); a lane is retired long before its calls could collide. */
const MAX_ID = 0xffff_ffff;

const NONE = Buffer.alloc(0);

/** A transport failure of a lane, shaped as grpc-js reports one, so the replica pool judges it as it does calls. */
function laneFault(
  code: status,
  details: string,
): Error & { code: status; details: string; metadata: Metadata } {
  return Object.assign(new Error(details), { code, details, metadata: new Metadata() });
}

interface PendingCall<Answer, Chunk> {
  resolve: (answer: Answer) => void;
  reject: (error: unknown) => void;
  timer: NodeJS.Timeout;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  /** What to send again if the replica refuses it unrun (draining). */
  retry: () => void;
  /** A streaming call's chunks go here as they come; `resolve` ends it. */
  chunk?: ((chunk: Chunk) => void) | undefined;
}

/** How a streaming call on a lane ends: done, refused unrun (draining), or failed. */
type StreamEnd = { done: true } | { refused: true } | { error: unknown };

/**
 * The reader's side of a streaming call on a lane: chunks queue here (at most the window granted) until taken;
 * taking them grants the server more.
 */
class LaneStream<Chunk> {
  private readonly queue: Chunk[] = [];
  private ended: StreamEnd | undefined;
  private wake: (() => void) | undefined;
  private taken = 0;
  private readonly grant: (credit: number) => void;

  constructor(grant: (credit: number) => void) {
    this.grant = grant;
  }

  push(chunk: Chunk): void {
    this.queue.push(chunk);
    this.wake?.();
  }

  end(how: StreamEnd): void {
    this.ended ??= how;
    this.wake?.();
  }

  /** The next chunk, or how the call ended once every chunk before that was taken. */
  async next(): Promise<{ chunk: Chunk } | StreamEnd> {
    while (this.queue.length === 0 && this.ended === undefined) {
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
    if (this.queue.length === 0) return this.ended!;
    const chunk = this.queue.shift()!;
    if (this.ended === undefined && ++this.taken >= STREAM_WINDOW / 2) {
      this.grant(this.taken);
      this.taken = 0;
    }
    return { chunk };
  }
}

/** The bytes a lane message carries, roughly: its buffers and strings, and those of the messages inside it. */
function messageBytes(value: object, depth = 2): number {
  let bytes = 0;
  for (const field of Object.values(value)) {
    if (typeof field === 'string') bytes += field.length;
    else if (Buffer.isBuffer(field)) bytes += field.length;
    else if (depth > 0 && typeof field === 'object' && field !== null)
      bytes += messageBytes(field, depth - 1);
  }
  return bytes;
}

/**
 * What one end of a lane writes: at once, until the other end has said it reads batches; then the messages of
 * one turn of the event loop as one batch (a message alone as it is), sent from `setImmediate`, or at once when
 * BATCH_LIMIT or BATCH_BYTES is reached. `flush` before ending the stream keeps what was sent in order.
 */
class Outbox<Message extends object> {
  /** The other end reads batches. */
  batching = false;
  private queue: Message[] = [];
  private bytes = 0;
  private scheduled = false;
  private readonly write: (message: Message) => void;

  constructor(write: (message: Message) => void) {
    this.write = write;
  }

  send(message: Message): void {
    if (!this.batching) {
      this.write(message);
      return;
    }
    const size = messageBytes(message);
    if (this.bytes + size > BATCH_BYTES) this.flush();
    this.queue.push(message);
    this.bytes += size;
    if (this.queue.length >= BATCH_LIMIT || this.bytes >= BATCH_BYTES) this.flush();
    else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.flush();
      });
    }
  }

  flush(): void {
    const queued = this.queue;
    if (queued.length === 0) return;
    this.queue = [];
    this.bytes = 0;
    this.write(queued.length === 1 ? queued[0]! : ({ batch: queued } as Message));
  }

  /** Drops what waits (the stream is gone). */
  clear(): void {
    this.queue = [];
    this.bytes = 0;
  }
}

/** The messages a lane message carries: those of its batch, else itself. */
const unbatched = <Message extends { batch?: Message[] | undefined }>(message: Message): Message[] =>
  message.batch?.length ? message.batch : [message];

/** Lane headers with BATCHES_HEADER (and, for a server that runs streaming calls, STREAMS_HEADER). */
function laneHeaders(streams: boolean): Metadata {
  const headers = new Metadata();
  headers.set(BATCHES_HEADER, '1');
  if (streams) headers.set(STREAMS_HEADER, '1');
  return headers;
}

type LaneCallOptions = {
  signal?: AbortSignal | undefined;
  trace?: TraceContext | undefined;
  deadlineMs: number;
};

/** One open stream to one replica. */
class Lane<Answer, Chunk> {
  readonly target: string;
  private readonly stream: ClientDuplexStream<Partial<LaneRequest>, LaneReply<Answer, Chunk>>;
  private readonly pending = new Map<number, PendingCall<Answer, Chunk>>();
  private readonly watched: WatchedCall;
  private readonly onClosed: (lane: Lane<Answer, Chunk>, fault?: Error) => void;
  private readonly onDraining: (lane: Lane<Answer, Chunk>) => void;
  private nextId = 1;
  /** Takes new calls (until rotated, drained or broken). */
  accepting = true;
  /** The server runs streaming calls on this lane (it said so in its headers). */
  streams = false;
  private closed = false;
  private readonly rotation: NodeJS.Timeout;
  private readonly outbox: Outbox<Partial<LaneRequest>>;

  constructor(options: {
    target: string;
    stream: ClientDuplexStream<Partial<LaneRequest>, LaneReply<Answer, Chunk>>;
    watched: WatchedCall;
    onClosed: (lane: Lane<Answer, Chunk>, fault?: Error) => void;
    /** The server said it drains: its replica takes no new calls. */
    onDraining: (lane: Lane<Answer, Chunk>) => void;
    rotateMs: number;
  }) {
    this.target = options.target;
    this.stream = options.stream;
    this.watched = options.watched;
    this.onClosed = options.onClosed;
    this.onDraining = options.onDraining;
    this.outbox = new Outbox((request) => this.stream.write(request));
    this.stream.on('metadata', (headers: Metadata) => {
      this.streams = headers.get(STREAMS_HEADER)[0] === '1';
      this.outbox.batching = headers.get(BATCHES_HEADER)[0] === '1';
    });
    this.stream.on('data', (reply: LaneReply<Answer, Chunk>) => {
      for (const one of unbatched(reply)) this.answer(one);
    });
    // The server ends a lane well only once it is ended and idle, or draining and idle: it answered every call
    // it ran before that, so a call still pending was sent as it ended (a drain racing it) and never ran, and
    // goes to another replica. A lane that ends otherwise ('error' comes first) fails what it had.
    let endedWell = false;
    this.stream.on('status', (ending: { code: status }) => {
      endedWell = ending.code === status.OK;
    });
    this.stream.on('end', () => {
      if (endedWell) this.close();
      else this.close(laneFault(status.UNAVAILABLE, `the lane to ${this.target} ended with calls pending`));
    });
    this.stream.on('error', (error: Error) => this.close(error));
    this.watched.signal.addEventListener(
      'abort',
      () => this.close(laneFault(status.UNAVAILABLE, `the replica ${this.target} stopped answering`)),
      { once: true },
    );
    this.rotation = setTimeout(() => this.retire(), options.rotateMs);
    this.rotation.unref();
  }

  call(
    method: string,
    json: Buffer,
    options: LaneCallOptions,
    settle: {
      resolve: (answer: Answer) => void;
      reject: (error: unknown) => void;
      retry: () => void;
      chunk?: (chunk: Chunk) => void;
    },
  ): number {
    const id = this.nextId;
    this.nextId = id === MAX_ID ? 1 : id + 1;
    const { signal } = options;
    const pending: PendingCall<Answer, Chunk> = {
      ...settle,
      signal,
      onAbort: undefined,
      timer: setTimeout(() => {
        if (!this.forget(id)) return;
        this.send({ id, cancel: true });
        // As grpc-js reports a unary call past its deadline: the replica pool ejects a replica that is slow.
        settle.reject(laneFault(status.DEADLINE_EXCEEDED, `${method} on ${this.target} missed its deadline`));
      }, options.deadlineMs),
    };
    if (signal) {
      pending.onAbort = () => {
        if (!this.forget(id)) return;
        this.send({ id, cancel: true });
        settle.reject(requestCancelled('request cancelled'));
      };
      signal.addEventListener('abort', pending.onAbort, { once: true });
    }
    this.pending.set(id, pending);
    this.send({
      id,
      method,
      json,
      traceparent: options.trace?.traceparent ?? '',
      tracestate: options.trace?.tracestate ?? '',
      ...(settle.chunk && { credit: STREAM_WINDOW }),
    });
    return id;
  }

  /**
   * A streaming call: its chunks as the reader takes them, then how it ended. The caller stops early with
   * `cancel` (the server is told, as for an abandoned call).
   */
  openStream(method: string, json: Buffer, options: LaneCallOptions) {
    let id = 0;
    const stream = new LaneStream<Chunk>((credit) => {
      if (this.pending.has(id)) this.send({ id, credit });
    });
    id = this.call(method, json, options, {
      resolve: () => stream.end({ done: true }),
      reject: (error) => stream.end({ error }),
      retry: () => stream.end({ refused: true }),
      chunk: (chunk) => stream.push(chunk),
    });
    return {
      next: () => stream.next(),
      cancel: () => {
        if (!this.forget(id)) return;
        this.send({ id, cancel: true });
        if (!this.accepting && this.pending.size === 0) this.end();
      },
    };
  }

  /** Stops taking calls, and ends the stream once the calls it has are answered. */
  retire(): void {
    this.accepting = false;
    clearTimeout(this.rotation);
    this.onClosed(this);
    if (this.pending.size === 0) this.end();
  }

  /** Fails every pending call with the lane's fault (without one: sends them elsewhere) and cancels the stream. */
  close(fault?: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.accepting = false;
    clearTimeout(this.rotation);
    this.watched.release();
    this.onClosed(this, fault);
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const call of calls) {
      this.unwatch(call);
      if (fault) call.reject(fault);
      else call.retry();
    }
    this.outbox.clear();
    this.stream.cancel();
  }

  private answer(reply: LaneReply<Answer, Chunk>): void {
    if (reply.draining && reply.id === 0) {
      this.retire();
      this.onDraining(this);
      return;
    }
    const call = this.pending.get(reply.id);
    if (call?.chunk && reply.chunk) {
      call.chunk(reply.chunk);
      return;
    }
    if (!call || !this.forget(reply.id)) return;
    if (reply.draining) call.retry();
    else if (reply.error.length > 0)
      call.reject(decodeGatewayError(reply.error.toString('utf8')) ?? internalError());
    else if (reply.answer) call.resolve(reply.answer);
    else if (call.chunk && reply.done) call.resolve(undefined as Answer);
    else call.reject(internalError(`a reply on the lane to ${this.target} carried no answer`));
    if (!this.accepting && this.pending.size === 0) this.end();
  }

  /** Removes a pending call (its timer and abort listener); false when it was no longer pending. */
  private forget(id: number): boolean {
    const call = this.pending.get(id);
    if (!call) return false;
    this.pending.delete(id);
    this.unwatch(call);
    return true;
  }

  private unwatch(call: PendingCall<Answer, Chunk>): void {
    clearTimeout(call.timer);
    if (call.onAbort) call.signal?.removeEventListener('abort', call.onAbort);
  }

  private send(request: Partial<LaneRequest>): void {
    if (!this.closed) this.outbox.send(request);
  }

  private end(): void {
    if (this.closed) return;
    this.closed = true;
    this.watched.release();
    this.outbox.flush();
    this.stream.end();
  }
}

/**
 * The client side of lanes over a replica pool: one lane per replica at a time, opened on first use. A lane
 * that breaks fails its pending calls as a unary call on that replica would have failed (UNAVAILABLE, and
 * the pool ejects the replica), and the next call opens a new one.
 */
export class LaneClient<Stub, Answer, Chunk = never> {
  private readonly pool: ReplicaPool<Stub>;
  private readonly open: (
    stub: Stub,
    headers: Metadata,
  ) => ClientDuplexStream<Partial<LaneRequest>, LaneReply<Answer, Chunk>>;
  private readonly unary: UnaryFallback<Stub, Answer> | undefined;
  private readonly lanes = new Map<string, Lane<Answer, Chunk>>();
  /** Replicas that answered UNIMPLEMENTED to a lane (older ones, mid-upgrade), until when to not try again. */
  private readonly withoutLanes = new Map<string, number>();
  private readonly rotateMs: number;

  constructor(options: {
    pool: ReplicaPool<Stub>;
    /**
     * Opens the Lane call on a replica's stub with these headers (BATCHES_HEADER; its interceptors add the
     * cluster token).
     */
    open: (
      stub: Stub,
      headers: Metadata,
    ) => ClientDuplexStream<Partial<LaneRequest>, LaneReply<Answer, Chunk>>;
    /**
     * The same call as a unary call on that replica, for a replica that serves no lanes (a version from
     * before them, during a rolling upgrade): what was on its refused lane never ran, so it is sent this way.
     */
    unary?: UnaryFallback<Stub, Answer>;
    /** How long a lane takes new calls (ROTATE_MS by default). */
    rotateMs?: number;
  }) {
    this.pool = options.pool;
    this.open = options.open;
    this.unary = options.unary;
    this.rotateMs = options.rotateMs ?? ROTATE_MS;
  }

  /**
   * One call on a lane to a connected replica. Fails as the unary call would: a GatewayError the server
   * answered, `cancelled` when the caller's signal aborts, or a transport fault (UNAVAILABLE,
   * DEADLINE_EXCEEDED) the pool has been told about. A call a draining replica refused is sent once to
   * another replica.
   */
  async call(
    method: string,
    json: Buffer,
    options: { signal?: AbortSignal | undefined; trace?: TraceContext | undefined; deadlineMs: number },
  ): Promise<Answer> {
    const avoid = new Set<string>();
    for (;;) {
      if (options.signal?.aborted) throw requestCancelled('request cancelled');
      const picked = await this.pool.connected(avoid);
      const unary = this.unary;
      if (unary && (this.withoutLanes.get(picked.target) ?? 0) > Date.now()) {
        return unary(picked, method, json, options);
      }
      const lane = this.lane(picked);
      const refused = await new Promise<Answer | 'refused' | 'unimplemented'>((resolve, reject) => {
        lane.call(method, json, options, {
          resolve,
          reject: (error) => {
            if (unary && (error as { code?: unknown }).code === status.UNIMPLEMENTED) {
              resolve('unimplemented');
              return;
            }
            this.pool.report(lane.target, error);
            reject(error);
          },
          retry: () => resolve('refused'),
        });
      });
      if (refused === 'unimplemented' && unary) {
        this.withoutLanes.set(picked.target, Date.now() + WITHOUT_LANES_MS);
        return unary(picked, method, json, options);
      }
      if (refused !== 'refused' && refused !== 'unimplemented') return refused;
      // Nothing ran: the replica is draining. Another one takes the call (or, when none is left, it fails).
      this.pool.report(lane.target, laneFault(status.UNAVAILABLE, `${lane.target} is draining`));
      if (avoid.has(lane.target)) throw serviceUnavailable('every replica is draining');
      avoid.add(lane.target);
    }
  }

  /**
   * A streaming call on a lane to a connected replica: its chunks, in order. Fails as `call` does (a failure
   * after chunks were yielded ends the iteration with it); a call a draining replica refused is sent once to
   * another replica. On a replica whose lane does not say it runs streaming calls (a version from before them,
   * or a lane whose headers have not arrived yet) the call is `fallback`'s, its own call on that replica.
   */
  async *stream(
    method: string,
    json: Buffer,
    options: LaneCallOptions,
    fallback: (replica: { stub: Stub; target: string }) => AsyncIterable<Chunk>,
  ): AsyncGenerator<Chunk> {
    const avoid = new Set<string>();
    for (;;) {
      if (options.signal?.aborted) throw requestCancelled('request cancelled');
      const picked = await this.pool.connected(avoid);
      const lane = this.lane(picked);
      if (!lane.streams) {
        yield* fallback(picked);
        return;
      }
      const call = lane.openStream(method, json, options);
      try {
        for (;;) {
          const next = await call.next();
          if ('chunk' in next) yield next.chunk;
          else if ('done' in next) return;
          else if ('error' in next) {
            this.pool.report(lane.target, next.error);
            throw next.error;
          } else break;
        }
      } finally {
        call.cancel();
      }
      // Refused unrun: the replica is draining. Another one takes the call (or, when none is left, it fails).
      this.pool.report(lane.target, laneFault(status.UNAVAILABLE, `${lane.target} is draining`));
      if (avoid.has(lane.target)) throw serviceUnavailable('every replica is draining');
      avoid.add(lane.target);
    }
  }

  /** Fails the calls of every lane and closes them. */
  close(): void {
    for (const lane of [...this.lanes.values()]) lane.close(laneFault(status.CANCELLED, 'the client closed'));
    this.lanes.clear();
  }

  private lane(picked: { stub: Stub; target: string }): Lane<Answer, Chunk> {
    const open = this.lanes.get(picked.target);
    if (open?.accepting) return open;
    const lane: Lane<Answer, Chunk> = new Lane({
      target: picked.target,
      stream: this.open(picked.stub, laneHeaders(false)),
      watched: this.pool.watch(picked.target),
      onClosed: (closed) => {
        if (this.lanes.get(closed.target) === closed) this.lanes.delete(closed.target);
      },
      onDraining: (draining) =>
        this.pool.report(draining.target, laneFault(status.UNAVAILABLE, `${draining.target} is draining`)),
      rotateMs: this.rotateMs,
    });
    this.lanes.set(picked.target, lane);
    return lane;
  }
}

/** What runs one call a lane carries: the service's handler for `method`. */
export type LaneHandler<Answer> = (
  method: string,
  json: Buffer,
  options: { signal: AbortSignal; trace: TraceContext | undefined },
) => Promise<Answer>;

/** The streaming calls a lane runs: their methods, and what runs one (its chunks, as they come). */
export interface LaneStreams<Chunk> {
  methods: ReadonlySet<string>;
  run: (
    method: string,
    json: Buffer,
    options: { signal: AbortSignal; trace: TraceContext | undefined },
  ) => AsyncIterable<Chunk>;
}

/** Chunks a streaming call on a lane may still send, and the wake-up of its sender waiting for more. */
interface Credit {
  left: number;
  wake: (() => void) | undefined;
}

/** Sends a streaming call's chunks, each when the client has granted one; ends once its run does or is aborted. */
async function sendChunks<Chunk>(
  chunks: AsyncIterable<Chunk>,
  credit: Credit,
  signal: AbortSignal,
  write: (chunk: Chunk) => void,
): Promise<void> {
  const wake = () => credit.wake?.();
  signal.addEventListener('abort', wake, { once: true });
  try {
    for await (const chunk of chunks) {
      while (credit.left <= 0 && !signal.aborted) {
        await new Promise<void>((resolve) => {
          credit.wake = resolve;
        });
        credit.wake = undefined;
      }
      if (signal.aborted) return;
      credit.left--;
      write(chunk);
    }
  } finally {
    signal.removeEventListener('abort', wake);
  }
}

/**
 * The server side of lanes: runs each call as it arrives (any number at once), answers each by its id,
 * aborts one on its cancel message and every one when the client goes away. When `draining` aborts, the
 * lane says so, refuses new calls unrun, and ends once its calls are answered, so a graceful shutdown
 * finishes what it took and nothing more.
 */
export function serveLanes<Answer, Chunk = never>(
  handler: LaneHandler<Answer>,
  draining: AbortSignal,
  streams?: LaneStreams<Chunk>,
): (call: ServerDuplexStream<LaneRequest, Partial<LaneReply<Answer, Chunk>>>) => void {
  return (call) => {
    const running = new Map<number, AbortController>();
    const credits = new Map<number, Credit>();
    call.sendMetadata(laneHeaders(streams !== undefined));
    const outbox = new Outbox<Partial<LaneReply<Answer, Chunk>>>((message) => call.write(message));
    outbox.batching = call.metadata.get(BATCHES_HEADER)[0] === '1';
    let ended = false;
    let closed = false;
    const send = (message: Partial<LaneReply<Answer, Chunk>>) => {
      if (!closed) outbox.send(message);
    };
    const finishIfIdle = () => {
      if (closed || running.size > 0 || !(ended || draining.aborted)) return;
      closed = true;
      draining.removeEventListener('abort', onDraining);
      outbox.flush();
      call.end();
    };
    const onDraining = () => {
      send({ id: 0, draining: true });
      finishIfIdle();
    };
    const gone = () => {
      closed = true;
      outbox.clear();
      draining.removeEventListener('abort', onDraining);
      for (const controller of running.values()) controller.abort();
      running.clear();
    };
    draining.addEventListener('abort', onDraining, { once: true });
    call.on('cancelled', gone);
    call.on('error', gone);
    call.on('end', () => {
      ended = true;
      finishIfIdle();
    });
    const take = (request: LaneRequest) => {
      const { id } = request;
      if (request.cancel) {
        running.get(id)?.abort();
        return;
      }
      if (!request.method && request.credit) {
        const credit = credits.get(id);
        if (credit) {
          credit.left += request.credit;
          credit.wake?.();
        }
        return;
      }
      if (draining.aborted || closed) {
        send({ id, draining: true });
        return;
      }
      if (running.has(id)) return;
      const controller = new AbortController();
      running.set(id, controller);
      const trace = traceOfFields(request.traceparent, request.tracestate);
      const reply = (message: Partial<LaneReply<Answer, Chunk>>) => {
        if (running.get(id) !== controller) return;
        running.delete(id);
        credits.delete(id);
        send(message);
        finishIfIdle();
      };
      const options = { signal: controller.signal, trace };
      let done: Promise<Partial<LaneReply<Answer, Chunk>>>;
      if (streams?.methods.has(request.method)) {
        const credit: Credit = { left: request.credit ?? 0, wake: undefined };
        credits.set(id, credit);
        done = Promise.resolve()
          .then(() =>
            sendChunks(
              streams.run(request.method, request.json, options),
              credit,
              controller.signal,
              (chunk) => send({ id, chunk }),
            ),
          )
          .then(() => ({ id, done: true }));
      } else {
        done = handler(request.method, request.json, options).then((answer) => ({ id, answer, error: NONE }));
      }
      done.then(reply, (error: unknown) => {
        const failure = error instanceof GatewayError ? error : internalError('internal error', error);
        reply({ id, error: Buffer.from(encodeGatewayError(failure)) });
      });
    };
    call.on('data', (request: LaneRequest) => {
      for (const one of unbatched(request)) take(one);
    });
  };
}
