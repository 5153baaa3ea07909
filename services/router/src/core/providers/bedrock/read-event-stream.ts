import { EventStreamCodec, type Message } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { networkError } from '../../upstream-client.ts';
import type { AdapterContext } from '../adapter.ts';
import { invalidUpstreamBody } from '../upstream-call.ts';

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** Prelude (total and header lengths, prelude CRC) plus the message CRC: the smallest possible frame. */
const MINIMUM_FRAME_BYTES = 16;
/** Far above any real event; a larger length means the stream is out of step, not a big event. */
const MAXIMUM_FRAME_BYTES = 16 * 1024 * 1024;

export interface EventStreamFrame {
  headers: Record<string, string>;
  body: Uint8Array;
}

function stringHeaders(message: Message): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, header] of Object.entries(message.headers)) {
    if (header.type === 'string') headers[name] = header.value;
  }
  return headers;
}

/**
 * Frames of an AWS event stream (`application/vnd.amazon.eventstream`) as they complete. Network reads
 * split frames anywhere, so bytes are buffered until the length in the frame's first four bytes is there,
 * then the frame is checked (both CRCs) and decoded.
 */
export async function* readEventStream(
  body: AsyncIterable<Uint8Array>,
  context: AdapterContext,
): AsyncGenerator<EventStreamFrame> {
  const pending: Buffer[] = [];
  let pendingBytes = 0;
  /** Bytes to wait for before looking again: the length prefix, then the whole frame. */
  let needed = 4;

  const corrupt = (what: string) => invalidUpstreamBody(context.provider, `stream ${what}`);

  try {
    for await (const bytes of body) {
      pending.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
      pendingBytes += bytes.byteLength;
      while (pendingBytes >= needed) {
        const buffered = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingBytes);
        pending.length = 0;
        pending.push(buffered);
        const total = buffered.readUInt32BE(0);
        if (total < MINIMUM_FRAME_BYTES || total > MAXIMUM_FRAME_BYTES) {
          throw corrupt(`carried a frame of impossible length ${total}`);
        }
        if (pendingBytes < total) {
          needed = total;
          break;
        }
        let message: Message;
        try {
          message = codec.decode(buffered.subarray(0, total));
        } catch {
          throw corrupt('carried a corrupt event frame');
        }
        pending[0] = buffered.subarray(total);
        pendingBytes -= total;
        needed = 4;
        yield { headers: stringHeaders(message), body: message.body };
      }
    }
  } catch (error) {
    throw networkError(error, { url: new URL(context.baseUrl), signal: context.signal });
  }
  if (pendingBytes > 0) throw corrupt('ended inside an event frame');
}
