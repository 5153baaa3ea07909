import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';

/** The codec the AWS SDK decodes with (prelude and message CRC32s, typed headers). */
const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** One `event` frame of an AWS event stream (`application/vnd.amazon.eventstream`) with a JSON payload. */
export function eventFrame(eventType: string, payload: unknown): Uint8Array {
  return jsonEventFrame(eventType, JSON.stringify(payload));
}

/** An event frame of a payload that is JSON text already (an upstream's own, relayed). */
export function jsonEventFrame(eventType: string, json: string): Uint8Array {
  return codec.encode({
    headers: {
      ':event-type': { type: 'string', value: eventType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'event' },
    },
    body: fromUtf8(json),
  });
}

/** An `exception` frame: how a Bedrock stream fails after it started (the SDK raises the named exception). */
export function exceptionFrame(exceptionType: string, message: string): Uint8Array {
  return codec.encode({
    headers: {
      ':exception-type': { type: 'string', value: exceptionType },
      ':content-type': { type: 'string', value: 'application/json' },
      ':message-type': { type: 'string', value: 'exception' },
    },
    body: fromUtf8(JSON.stringify({ message })),
  });
}

export function concatFrames(frames: Uint8Array[]): Uint8Array {
  return frames.length === 1 ? frames[0]! : Buffer.concat(frames);
}
