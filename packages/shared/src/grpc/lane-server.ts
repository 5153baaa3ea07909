import type { ServerDuplexStream } from '@grpc/grpc-js';
import { encodeGatewayError, GatewayError, internalError, invalidRequest } from '../errors/gateway-error.ts';
import type { TraceContext } from '../tracing/tracer.ts';
import {
  type LaneCall,
  type LaneReply,
  type LaneReplyMessage,
  type LaneRequest,
  type LaneRequestMessage,
  Outbox,
  unbatched,
} from './lane-wire.ts';
import { traceOfFields } from './trace-metadata.ts';

type LaneCallContext = { signal: AbortSignal; trace: TraceContext | undefined };

/** What runs one call a lane carries that is answered once. */
export type LaneHandler<Answer> = (json: Buffer, context: LaneCallContext) => Promise<Answer>;

/** What runs one streaming call a lane carries: its chunks, as they come. */
export type LaneStreamHandler<Chunk> = (json: Buffer, context: LaneCallContext) => AsyncIterable<Chunk>;

/** The methods a service's lanes carry, by name: those answered once, and the streaming ones. */
export interface LaneMethods<Answer, Chunk> {
  calls: Record<string, LaneHandler<Answer>>;
  streams?: Record<string, LaneStreamHandler<Chunk>>;
}

/** The lane's stream of one client, as its server reads and writes it. */
export type LaneServerCall<Answer, Chunk> = ServerDuplexStream<
  LaneRequestMessage,
  LaneReplyMessage<Answer, Chunk>
>;

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
 * Runs a call by its method: its answer, or its chunks (each sent as the client grants it) and then `done`; an
 * unknown method is invalid_request. A streaming call's credit is returned, for the client's grants to add to.
 */
function runCall<Answer, Chunk>(
  methods: LaneMethods<Answer, Chunk>,
  started: { id: number; call: LaneCall; context: LaneCallContext; send: (chunk: Chunk) => void },
): { credit?: Credit; ended: Promise<LaneReply<Answer, Chunk>> } {
  const { id, context } = started;
  const { method, json } = started.call;
  const stream =
    methods.streams && Object.hasOwn(methods.streams, method) ? methods.streams[method] : undefined;
  if (stream) {
    // A streaming call without credit could never send a chunk: only a broken client sends one.
    if (started.call.credit === 0)
      return { ended: Promise.reject(invalidRequest(`a ${method} call needs credit`)) };
    const credit: Credit = { left: started.call.credit, wake: undefined };
    const ended = Promise.resolve()
      .then(() => sendChunks(stream(json, context), credit, context.signal, started.send))
      .then((): LaneReply<Answer, Chunk> => ({ id, kind: 'done', done: true }));
    return { credit, ended };
  }
  const handler = Object.hasOwn(methods.calls, method) ? methods.calls[method] : undefined;
  if (!handler) {
    const known = [...Object.keys(methods.calls), ...Object.keys(methods.streams ?? {})].join(', ');
    return { ended: Promise.reject(invalidRequest(`a lane carries ${known} calls, not '${method}'`)) };
  }
  return {
    ended: handler(json, context).then(
      (answer): LaneReply<Answer, Chunk> => ({ id, kind: 'answer', answer }),
    ),
  };
}

/**
 * The server side of lanes: runs each call as it arrives (any number at once), answers each by its id, aborts
 * one on its cancel message and every one when the client goes away. When `draining` aborts, the lane says so,
 * refuses new calls unrun, and ends once its calls are answered, so a graceful shutdown finishes what it took and
 * nothing more.
 */
export function serveLanes<Answer, Chunk = never>(
  options: LaneMethods<Answer, Chunk> & { draining: AbortSignal },
): (call: LaneServerCall<Answer, Chunk>) => void {
  const { draining } = options;
  return (call) => {
    const running = new Map<number, AbortController>();
    const credits = new Map<number, Credit>();
    const outbox = new Outbox<LaneReply<Answer, Chunk>>((message) => call.write(message));
    let ended = false;
    let closed = false;
    const send = (message: LaneReply<Answer, Chunk>) => {
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
      send({ id: 0, kind: 'draining', draining: true });
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
    const start = (id: number, request: LaneCall) => {
      if (draining.aborted || closed) {
        send({ id, kind: 'refused', refused: true });
        return;
      }
      if (running.has(id)) return;
      const controller = new AbortController();
      running.set(id, controller);
      const run = runCall(options, {
        id,
        call: request,
        context: { signal: controller.signal, trace: traceOfFields(request.traceparent, request.tracestate) },
        send: (chunk: Chunk) => send({ id, kind: 'chunk', chunk }),
      });
      if (run.credit) credits.set(id, run.credit);
      const reply = (message: LaneReply<Answer, Chunk>) => {
        if (running.get(id) !== controller) return;
        running.delete(id);
        credits.delete(id);
        send(message);
        finishIfIdle();
      };
      run.ended.then(reply, (error: unknown) => {
        const failure = error instanceof GatewayError ? error : internalError('internal error', error);
        reply({ id, kind: 'error', error: Buffer.from(encodeGatewayError(failure)) });
      });
    };
    const take = (request: LaneRequest) => {
      switch (request.kind) {
        case 'call':
          start(request.id, request.call);
          break;
        case 'cancel':
          running.get(request.id)?.abort();
          break;
        case 'credit': {
          const credit = credits.get(request.id);
          if (!credit) break;
          credit.left += request.credit;
          credit.wake?.();
          break;
        }
        // A kind this version does not know (a newer peer): nothing to run.
      }
    };
    call.on('data', (message: LaneRequestMessage) => {
      for (const request of unbatched(message)) take(request);
    });
  };
}
