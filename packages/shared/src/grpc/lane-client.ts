import { status } from '@grpc/grpc-js';
import { internalError, requestCancelled, serviceUnavailable } from '../errors/gateway-error.ts';
import { Lane, type LaneCallOptions, type LaneStreamCall } from './lane.ts';
import type { CallEnd, StreamStep } from './lane-chunk-queue.ts';
import { laneFault } from './lane-wire.ts';
import type { PickedReplica, ReplicaPool } from './replica-pool.ts';

/** How long a lane takes new calls; then it ends once those it has are answered. */
const ROTATE_MS = 5_000;

/** How one try of a call on a replica's lane came out. */
type Outcome<Result> = { answer: Result } | { refused: true } | { error: unknown };

/** A draining replica, as a transport failure, so the pool passes it over until it answers health checks. */
const drainingFault = (target: string) => laneFault(status.UNAVAILABLE, `${target} is draining`);

/**
 * The client side of lanes over a replica pool: one lane per replica at a time, opened on first use. A lane
 * carries every call from its first message, streams included (every server of this version runs them); the
 * client knows no other transport for them. A lane that breaks fails its pending calls as a unary call on that
 * replica would have failed (UNAVAILABLE, and the pool ejects the replica), and the next call opens a new one.
 */
export class LaneClient<Stub, Answer, Chunk = never> {
  private readonly pool: ReplicaPool<Stub>;
  private readonly open: (stub: Stub) => LaneStreamCall<Answer, Chunk>;
  private readonly lanes = new Map<string, Lane<Answer, Chunk>>();
  private readonly rotateMs: number;

  constructor(options: {
    pool: ReplicaPool<Stub>;
    /** Opens the Lane call on a replica's stub (its interceptors add the cluster token). */
    open: (stub: Stub) => LaneStreamCall<Answer, Chunk>;
    /** How long a lane takes new calls (ROTATE_MS by default). */
    rotateMs?: number;
  }) {
    this.pool = options.pool;
    this.open = options.open;
    this.rotateMs = options.rotateMs ?? ROTATE_MS;
  }

  /**
   * One call on a lane to a connected replica. Fails as a unary call would: a GatewayError the server
   * answered, `cancelled` when the caller's signal aborts, or a transport fault (UNAVAILABLE,
   * DEADLINE_EXCEEDED) the pool has been told about. A call a draining replica refused is sent once to
   * another replica.
   */
  call(method: string, json: Buffer, options: LaneCallOptions): Promise<Answer> {
    return this.onLane(options.signal, async (lane) => {
      const end = await new Promise<CallEnd<Answer>>((resolve) => {
        lane.call(method, json, options, { end: resolve });
      });
      if (!('done' in end)) return end;
      return { error: internalError(`a ${method} call on the lane to ${lane.target} ended as a stream`) };
    });
  }

  /**
   * A streaming call on a lane to a connected replica: its chunks, in order. Fails as `call` does (a failure
   * after chunks were yielded ends the iteration with it); a call a draining replica refused (before its first
   * chunk) is sent once to another replica.
   */
  async *stream(method: string, json: Buffer, options: LaneCallOptions): AsyncGenerator<Chunk> {
    const { lane, stream, first } = await this.onLane(options.signal, async (lane) => {
      const opened = lane.openStream(method, json, options);
      const next = await opened.next();
      if ('refused' in next || 'error' in next) return next;
      return { answer: { lane, stream: opened, first: next } };
    });
    try {
      for (let next: StreamStep<Chunk> = first; ; next = await stream.next()) {
        if ('chunk' in next) yield next.chunk;
        else if ('done' in next) return;
        else {
          // A refusal comes before any chunk; after one, the lane ended under the call.
          const error =
            'error' in next ? next.error : laneFault(status.UNAVAILABLE, `${lane.target} ended a stream`);
          this.pool.report(lane.target, error);
          throw error;
        }
      }
    } finally {
      stream.cancel();
    }
  }

  /** Fails the calls of every lane and closes them. */
  close(): void {
    for (const lane of [...this.lanes.values()]) lane.close(laneFault(status.CANCELLED, 'the client closed'));
    this.lanes.clear();
  }

  /**
   * Tries a call on the lane of a connected replica; when that replica refused it unrun (it drains), on another,
   * each replica once. A failure is reported to the pool (a replica fault ejects the replica) and thrown.
   */
  private async onLane<Result>(
    signal: AbortSignal | undefined,
    attempt: (lane: Lane<Answer, Chunk>) => Promise<Outcome<Result>>,
  ): Promise<Result> {
    const avoid = new Set<string>();
    for (;;) {
      if (signal?.aborted) throw requestCancelled('request cancelled');
      const lane = this.lane(await this.pool.connected(avoid));
      const outcome = await attempt(lane);
      if ('answer' in outcome) return outcome.answer;
      if ('error' in outcome) {
        this.pool.report(lane.target, outcome.error);
        throw outcome.error;
      }
      // Nothing ran: the replica is draining. Another one takes the call (or, when none is left, it fails).
      this.pool.report(lane.target, drainingFault(lane.target));
      if (avoid.has(lane.target)) throw serviceUnavailable('every replica is draining');
      avoid.add(lane.target);
    }
  }

  private lane(picked: PickedReplica<Stub>): Lane<Answer, Chunk> {
    const open = this.lanes.get(picked.target);
    if (open?.accepting) return open;
    const lane = new Lane<Answer, Chunk>({
      target: picked.target,
      stream: this.open(picked.stub),
      watched: this.pool.watch(picked.target),
      onClosed: (closed) => {
        if (this.lanes.get(closed.target) === closed) this.lanes.delete(closed.target);
      },
      onDraining: (draining) => this.pool.report(draining.target, drainingFault(draining.target)),
      rotateMs: this.rotateMs,
    });
    this.lanes.set(picked.target, lane);
    return lane;
  }
}
