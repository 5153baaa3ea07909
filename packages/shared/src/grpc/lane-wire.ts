import { Metadata, type status } from '@grpc/grpc-js';

/**
 * Lanes: short calls as messages on one long-lived bidirectional stream per replica. A grpc-js unary call
 * costs its two ends about 150–200 µs of CPU (a stream, headers, metadata, a deadline, trailers); a message on
 * a stream that is already open costs about 35 µs. A governed request makes a call on every hop, so that is
 * most of what a cluster adds to it (docs/architecture.md "Lanes").
 *
 * The wire (proto/lane.proto, and each service's LaneReply): the client numbers each call on a lane; the server
 * answers with the same number, in any order. Every message says what it is by the case of its `kind` oneof,
 * which proto-loader names in the virtual field `kind` (grpc-channel.ts loads protos with `oneofs: true`): the
 * types below are that union, and both ends switch on it. This file holds what both ends share: the messages,
 * the batching of one turn's messages, and the stream credit. `lane.ts` and `lane-client.ts` are the client,
 * `lane-server.ts` the server.
 */

/** A new call: the service's method, its JSON request, the caller's trace, and a streaming call's first credit. */
export interface LaneCall {
  method: string;
  json: Buffer;
  traceparent: string;
  tracestate: string;
  /** A streaming call: the chunks the server may send before it is granted more (0 for a call answered once). */
  credit: number;
}

/** The messages of one turn of an end's event loop, as one message (`id` 0). */
export interface LaneBatch<Message> {
  id: number;
  kind: 'batch';
  batch: { messages: Message[] };
}

/** One message from a lane's client. */
export type LaneRequest =
  | { id: number; kind: 'call'; call: LaneCall }
  /** Abort call `id`: its caller went away, or its deadline passed. */
  | { id: number; kind: 'cancel'; cancel: true }
  /** More chunks granted to streaming call `id`, as its reader takes them. */
  | { id: number; kind: 'credit'; credit: number };

/** One message from a lane's server; `Answer` and `Chunk` are the service's own messages. */
export type LaneReply<Answer, Chunk = never> =
  | { id: number; kind: 'answer'; answer: Answer }
  /** Call `id` failed: its gateway error, as encodeGatewayError writes it. */
  | { id: number; kind: 'error'; error: Buffer }
  | { id: number; kind: 'chunk'; chunk: Chunk }
  /** Streaming call `id` ended well. */
  | { id: number; kind: 'done'; done: true }
  /** Call `id` did not run: the server drains (the client sends it to another replica). */
  | { id: number; kind: 'refused'; refused: true }
  /** The server drains: it takes no new calls on this lane (`id` 0). */
  | { id: number; kind: 'draining'; draining: true };

/** What travels on a lane's stream, each way: one message, or the batch of one turn. */
export type LaneRequestMessage = LaneRequest | LaneBatch<LaneRequest>;
export type LaneReplyMessage<Answer, Chunk = never> =
  | LaneReply<Answer, Chunk>
  | LaneBatch<LaneReply<Answer, Chunk>>;

/** Most messages one batch carries, and the bytes past which a batch goes at once (a larger message goes alone). */
const BATCH_LIMIT = 64;
const BATCH_BYTES = 1024 * 1024;

/**
 * Chunks a streaming call may have sent and its reader not yet taken: granted with the call, then half of it
 * again each time the reader has taken that many. What a lane holds for one slow reader is bounded by it.
 */
export const STREAM_WINDOW = 16;

/** The messages a lane message carries: those of its batch, else itself. */
export function unbatched<Message extends { kind: string }>(
  message: Message | LaneBatch<Message>,
): Message[] {
  return message.kind === 'batch' ? (message as LaneBatch<Message>).batch.messages : [message as Message];
}

/** A transport failure of a lane, shaped as grpc-js reports one, so the replica pool judges it as it does calls. */
export function laneFault(
  code: status,
  details: string,
): Error & { code: status; details: string; metadata: Metadata } {
  return Object.assign(new Error(details), { code, details, metadata: new Metadata() });
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
 * What one end of a lane writes: the messages of one turn of the event loop as one batch (a message alone as it
 * is), sent from `setImmediate`, so nothing waits past the turn it was sent in; at once when BATCH_LIMIT or
 * BATCH_BYTES is reached. `flush` before ending the stream keeps what was sent in order.
 */
export class Outbox<Message extends object> {
  private queue: Message[] = [];
  private bytes = 0;
  private scheduled = false;
  private readonly write: (message: Message | LaneBatch<Message>) => void;

  constructor(write: (message: Message | LaneBatch<Message>) => void) {
    this.write = write;
  }

  send(message: Message): void {
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
    this.write(queued.length === 1 ? queued[0]! : { id: 0, kind: 'batch', batch: { messages: queued } });
  }

  /** Drops what waits (the stream is gone). */
  clear(): void {
    this.queue = [];
    this.bytes = 0;
  }
}
