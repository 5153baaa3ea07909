import { crc32 } from 'node:zlib';

/**
 * AWS event-stream messages (`application/vnd.amazon.eventstream`), as the AWS SDK decodes them: a prelude
 * (total length, headers' length, both u32 big-endian, and the prelude's CRC-32), the headers, the payload,
 * and the CRC-32 of all that. Written here into one buffer with Node's native CRC-32 rather than with
 * @smithy's general codec, which costs some 30 µs a frame (eight times this), on every frame of every stream
 * and twice before its first byte.
 */
const PRELUDE_BYTES = 12;
const CRC_BYTES = 4;
const STRING_HEADER = 7;

/** Headers whose values are all strings, encoded (name length u8, name, type, value length u16, value). */
function encodeHeaders(headers: Record<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(headers)) {
    const nameBytes = Buffer.from(name);
    const valueBytes = Buffer.from(value);
    const header = Buffer.allocUnsafe(1 + nameBytes.length + 1 + 2 + valueBytes.length);
    header.writeUInt8(nameBytes.length, 0);
    nameBytes.copy(header, 1);
    header.writeUInt8(STRING_HEADER, 1 + nameBytes.length);
    header.writeUInt16BE(valueBytes.length, 2 + nameBytes.length);
    valueBytes.copy(header, 4 + nameBytes.length);
    parts.push(header);
  }
  return Buffer.concat(parts);
}

function encodeMessage(headers: Buffer, payload: string): Buffer {
  const total = PRELUDE_BYTES + headers.length + Buffer.byteLength(payload) + CRC_BYTES;
  const message = Buffer.allocUnsafe(total);
  message.writeUInt32BE(total, 0);
  message.writeUInt32BE(headers.length, 4);
  message.writeUInt32BE(crc32(message.subarray(0, 8)), 8);
  headers.copy(message, PRELUDE_BYTES);
  message.write(payload, PRELUDE_BYTES + headers.length);
  message.writeUInt32BE(crc32(message.subarray(0, total - CRC_BYTES)), total - CRC_BYTES);
  return message;
}

/** An event's headers depend on its type alone; Bedrock's streams use a handful of types, each encoded once. */
const eventHeaders = new Map<string, Buffer>();
/** Relayed streams name their own event types: types past this many are encoded each time, not kept. */
const MOST_EVENT_TYPES_KEPT = 64;

/** One `event` frame of an AWS event stream (`application/vnd.amazon.eventstream`) with a JSON payload. */
export function eventFrame(eventType: string, payload: unknown): Uint8Array {
  return jsonEventFrame(eventType, JSON.stringify(payload));
}

/** An event frame of a payload that is JSON text already (an upstream's own, relayed). */
export function jsonEventFrame(eventType: string, json: string): Uint8Array {
  let headers = eventHeaders.get(eventType);
  if (!headers) {
    headers = encodeHeaders({
      ':event-type': eventType,
      ':content-type': 'application/json',
      ':message-type': 'event',
    });
    if (eventHeaders.size < MOST_EVENT_TYPES_KEPT) eventHeaders.set(eventType, headers);
  }
  return encodeMessage(headers, json);
}

/** An `exception` frame: how a Bedrock stream fails after it started (the SDK raises the named exception). */
export function exceptionFrame(exceptionType: string, message: string): Uint8Array {
  const headers = encodeHeaders({
    ':exception-type': exceptionType,
    ':content-type': 'application/json',
    ':message-type': 'exception',
  });
  return encodeMessage(headers, JSON.stringify({ message }));
}

export function concatFrames(frames: Uint8Array[]): Uint8Array {
  return frames.length === 1 ? frames[0]! : Buffer.concat(frames);
}
