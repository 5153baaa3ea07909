import { type ClientDuplexStream, status } from '@grpc/grpc-js';
import { decodeGatewayError, internalError, requestCancelled } from '../errors/gateway-error.ts';
import type { TraceContext } from '../tracing/tracer.ts';
import { type CallEnd, ChunkQueue, type LaneStream } from './lane-chunk-queue.ts';
import {
  type LaneReply,
  type LaneReplyMessage,
  type LaneRequest,
  type LaneRequestMessage,
  laneFault,
  Outbox,
  STREAM_WINDOW,
  unbatched,
} from './lane-wire.ts';
import type { WatchedCall } from './replica-pool.ts';

/** Call ids wrap here (uint32 on the wire); a lane is retired long before its calls could collide. */
const MAX_ID = 0xffff_ffff;

export type LaneCallOptions = {
  signal?: AbortSignal | undefined;
  trace?: TraceContext | undefined;
  deadlineMs: number;
};

/** The lane's stream of one replica, as its client writes and reads it. */
export type LaneStreamCall<Answer, Chunk> = ClientDuplexStream<
  LaneRequestMessage,
  LaneReplyMessage<Answer, Chunk>
>;

interface PendingCall<Answer, Chunk> {
  end: (how: CallEnd<Answer>) => void;
  timer: NodeJS.Timeout;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  /** A streaming call's chunks go here as they come. */
  chunk: ((chunk: Chunk) => void) | undefined;
}

/**
 * One open stream to one replica. It takes calls until it is retired (every `rotateMs`, or when its server
 * says it drains), then ends once its calls are answered, so a lane never outlives the connection it runs on
 * by more than that (servers close connections past their maximum age, and a stream opened on an old
 * connection keeps only the grace period).
 */
export class Lane<Answer, Chunk> {
  readonly target: string;
  private readonly stream: LaneStreamCall<Answer, Chunk>;
  private readonly pending = new Map<number, PendingCall<Answer, Chunk>>();
  private readonly watched: WatchedCall;
  private readonly onClosed: (lane: Lane<Answer, Chunk>) => void;
  private readonly onDraining: (lane: Lane<Answer, Chunk>) => void;
  private nextId = 1;
  /** Takes new calls (until rotated, drained or broken). */
  accepting = true;
  private closed = false;
  private readonly rotation: NodeJS.Timeout;
  private readonly outbox: Outbox<LaneRequest>;

  constructor(options: {
    target: string;
    stream: LaneStreamCall<Answer, Chunk>;
    /** The replica's health: the lane fails its calls at once when the replica stops answering. */
    watched: WatchedCall;
    /** The lane takes no more calls. */
    onClosed: (lane: Lane<Answer, Chunk>) => void;
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
    this.stream.on('data', (message: LaneReplyMessage<Answer, Chunk>) => {
      this.watched.heard();
      for (const reply of unbatched(message)) this.answer(reply);
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

  /**
   * Sends a call; `end` is told how it ended, once: the server's answer or error, refused unrun, cancelled by
   * the caller's signal, or DEADLINE_EXCEEDED past `deadlineMs` (as grpc-js reports a unary call past its
   * deadline, so the replica pool ejects a slow replica). Either of the last two cancels it on the server.
   */
  call(
    method: string,
    json: Buffer,
    options: LaneCallOptions,
    handlers: { end: (how: CallEnd<Answer>) => void; chunk?: (chunk: Chunk) => void },
  ): number {
    const id = this.nextId;
    this.nextId = id === MAX_ID ? 1 : id + 1;
    const { signal } = options;
    const stop = (error: unknown) => {
      if (!this.forget(id)) return;
      this.send({ id, kind: 'cancel', cancel: true });
      handlers.end({ error });
      this.endIfRetiredAndIdle();
    };
    const pending: PendingCall<Answer, Chunk> = {
      end: handlers.end,
      chunk: handlers.chunk,
      signal,
      onAbort: undefined,
      timer: setTimeout(
        () => stop(laneFault(status.DEADLINE_EXCEEDED, `${method} on ${this.target} missed its deadline`)),
        options.deadlineMs,
      ),
    };
    if (signal) {
      pending.onAbort = () => stop(requestCancelled('request cancelled'));
      signal.addEventListener('abort', pending.onAbort, { once: true });
    }
    this.pending.set(id, pending);
    const call = {
      method,
      json,
      traceparent: options.trace?.traceparent ?? '',
      tracestate: options.trace?.tracestate ?? '',
      credit: handlers.chunk ? STREAM_WINDOW : 0,
    };
    this.send({ id, kind: 'call', call });
    return id;
  }

  /** A streaming call: its chunks as the reader takes them, then how it ended. */
  openStream(method: string, json: Buffer, options: LaneCallOptions): LaneStream<Chunk> {
    let id = 0;
    const queue = new ChunkQueue<Chunk>((credit) => {
      if (this.pending.has(id)) this.send({ id, kind: 'credit', credit });
    });
    id = this.call(method, json, options, {
      end: (how) =>
        queue.end(
          'answer' in how
            ? { error: internalError(`a ${method} call on the lane to ${this.target} was answered once`) }
            : how,
        ),
      chunk: (chunk) => queue.push(chunk),
    });
    return {
      next: () => queue.next(),
      cancel: () => {
        if (!this.forget(id)) return;
        this.send({ id, kind: 'cancel', cancel: true });
        this.endIfRetiredAndIdle();
      },
    };
  }

  /** Stops taking calls, and ends the stream once the calls it has are answered. */
  retire(): void {
    this.accepting = false;
    clearTimeout(this.rotation);
    this.onClosed(this);
    this.endIfRetiredAndIdle();
  }

  /** Ends every pending call with the lane's fault (without one: refused, to go elsewhere) and cancels the stream. */
  close(fault?: Error): void {
    if (this.closed) return;
    this.closed = true;
    this.accepting = false;
    clearTimeout(this.rotation);
    this.watched.release();
    this.onClosed(this);
    const calls = [...this.pending.values()];
    this.pending.clear();
    for (const call of calls) {
      this.unwatch(call);
      call.end(fault ? { error: fault } : { refused: true });
    }
    this.outbox.clear();
    this.stream.cancel();
  }

  private answer(reply: LaneReply<Answer, Chunk>): void {
    if (reply.kind === 'draining') {
      this.retire();
      this.onDraining(this);
      return;
    }
    if (reply.kind === 'chunk') {
      this.pending.get(reply.id)?.chunk?.(reply.chunk);
      return;
    }
    const call = this.pending.get(reply.id);
    if (!call || !this.forget(reply.id)) return;
    switch (reply.kind) {
      case 'answer':
        call.end({ answer: reply.answer });
        break;
      case 'done':
        call.end({ done: true });
        break;
      case 'refused':
        call.end({ refused: true });
        break;
      case 'error':
        call.end({ error: decodeGatewayError(reply.error.toString('utf8')) ?? internalError() });
        break;
      default:
        // A kind this version does not know (a newer peer): the call cannot be finished here.
        call.end({ error: internalError(`a reply on the lane to ${this.target} carried no known kind`) });
    }
    this.endIfRetiredAndIdle();
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

  private send(request: LaneRequest): void {
    if (!this.closed) this.outbox.send(request);
  }

  private endIfRetiredAndIdle(): void {
    if (this.accepting || this.pending.size > 0 || this.closed) return;
    this.closed = true;
    this.watched.release();
    this.outbox.flush();
    this.stream.end();
  }
}
