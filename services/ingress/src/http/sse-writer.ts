import type { ServerResponse } from 'node:http';
import type { StreamItem } from '@gw/router';
import { drained, GatewayError, type Logger, type Metrics } from '@gw/shared';
import { noteFailedTarget } from '../request/request-log.ts';
import { answerStatus } from './answer-status.ts';
import type { RequestContext } from './route.ts';

/**
 * How a surface frames a stream. Framings that keep state (Anthropic's content blocks, Bedrock's binary
 * event stream) are made per request; `end` may then be computed from what the stream carried.
 */
export interface SseFraming {
  /** Bytes written for one item (its chunk already serialized); empty when the item maps to nothing. */
  event(item: StreamItem): string | Uint8Array;
  /** Bytes written once the stream ended well (OpenAI's `data: [DONE]`). */
  end?: string | (() => string | Uint8Array);
  /** Bytes written when the stream fails after it started. */
  error(error: GatewayError): string | Uint8Array;
  contentType?: string;
}

/**
 * A surface's framing that relays a stream answering the caller's native request (router-service.ts
 * StreamItem.native) as the provider sent it, event by event, and frames any other stream itself.
 */
export function relayingNative(framing: SseFraming): SseFraming {
  let relayed = false;
  return {
    ...framing,
    event(item) {
      if (item.native === undefined) return framing.event(item);
      relayed = true;
      return item.native;
    },
    end: () => {
      if (relayed) return '';
      return typeof framing.end === 'function' ? framing.end() : (framing.end ?? '');
    },
  };
}

/** OpenAI's framing: `data: {chunk}` per item, `data: [DONE]` at the end. */
export const OPENAI_SSE: SseFraming = {
  event: (item) => `data: ${item.json ?? JSON.stringify(item.chunk)}\n\n`,
  end: 'data: [DONE]\n\n',
  error: (error) =>
    `data: ${JSON.stringify({ error: { type: error.type, message: error.message, code: error.code, param: error.param }, status_code: error.status })}\n\n`,
};

/**
 * Writes a stream as server-sent events, each item the moment it arrives (no waiting for more). Headers go out
 * with the first item, so an error before it is an ordinary error answer (thrown); an error after it becomes an
 * error event. The events that arrive in one turn of the event loop (those of one upstream read) go out as one
 * write: each write of a chunked answer is four pieces handed to the socket (size, CRLF, data, CRLF), each a
 * string encoded on its own, so a read of six events cost 24 pieces and its system call a sixth of a stream's CPU.
 */
export async function writeSse(options: {
  response: ServerResponse;
  items: AsyncIterable<StreamItem>;
  context: RequestContext;
  framing: SseFraming;
  metrics: Metrics;
  logger: Logger;
}): Promise<void> {
  const { response, context, framing } = options;
  const start = (status: 200 | 246 = 200) => {
    response.writeHead(status, {
      'content-type': framing.contentType ?? 'text/event-stream',
      'cache-control': 'no-cache',
      // No `connection` header of our own: Node keeps the connection unless the client asked `Connection: close`
      // (then it closes after the stream), and HTTP/2 has none (RFC 9113 §8.2.2).
      'x-request-id': context.requestId,
    });
  };
  /** The events of this turn, written together at its end (`flush`), or with the answer's end. */
  const pending: Array<string | Uint8Array> = [];
  let flushQueued = false;
  /** The client's socket was full at the last write: the next item is not asked for until it drains. */
  let full: Promise<void> | undefined;
  const flush = () => {
    flushQueued = false;
    if (pending.length === 0 || response.destroyed) return;
    if (!response.write(takePending(pending))) full = drained(response);
  };
  const finish = (last: string | Uint8Array) => {
    if (response.destroyed) return;
    pending.push(last);
    response.end(takePending(pending));
  };
  try {
    for await (const item of options.items) {
      if (!response.headersSent) {
        if (item.provider) context.provider = item.provider;
        // 246 when a guardrail changed the input (the guardrail stage marks the first chunk).
        start(answerStatus(item.chunk.extra_fields));
        options.metrics.streamFirstChunk.observe(
          { route: context.route, provider: context.provider || 'none' },
          (performance.now() - context.startedAt) / 1000,
        );
      }
      if (response.destroyed) return;
      const bytes = framing.event(item);
      if (bytes.length === 0) continue;
      pending.push(bytes);
      if (!flushQueued) {
        flushQueued = true;
        process.nextTick(flush);
      }
      // Back-pressure: while the client's socket is full, the next item is not asked for, so the upstream
      // is not read either (through the router's gRPC stream and HTTP/2 flow control in cluster mode).
      if (full) {
        await full;
        full = undefined;
      }
    }
  } catch (error) {
    if (!response.headersSent) throw error;
    const failure =
      error instanceof GatewayError
        ? error
        : new GatewayError({ type: 'internal_error', message: 'stream failed' });
    context.errorType = failure.type;
    noteFailedTarget(context.log, failure);
    finish(framing.error(failure));
    options.logger.warn(
      { requestId: context.requestId, type: failure.type },
      'stream failed after it started',
    );
    return;
  }
  if (!response.headersSent) start();
  finish(typeof framing.end === 'function' ? framing.end() : (framing.end ?? ''));
}

/** What is pending as one string (or one buffer when a framing made bytes), emptying the list. */
function takePending(pending: Array<string | Uint8Array>): string | Uint8Array {
  const taken = pending.length === 1 ? pending[0]! : join(pending);
  pending.length = 0;
  return taken;
}

function join(pieces: ReadonlyArray<string | Uint8Array>): string | Uint8Array {
  if (pieces.every((piece) => typeof piece === 'string')) return pieces.join('');
  return Buffer.concat(pieces.map((piece) => (typeof piece === 'string' ? Buffer.from(piece) : piece)));
}
