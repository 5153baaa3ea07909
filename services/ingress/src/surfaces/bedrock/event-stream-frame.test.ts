import { EventStreamCodec } from '@smithy/core/event-streams';
import { fromUtf8, toUtf8 } from '@smithy/core/serde';
import { describe, expect, it } from 'vitest';
import { concatFrames, eventFrame, exceptionFrame, jsonEventFrame } from './event-stream-frame.ts';

/** The AWS SDK's own decoder: it checks both CRCs and throws on a frame it cannot read. */
const codec = new EventStreamCodec(toUtf8, fromUtf8);
const decoded = (frame: Uint8Array) => {
  const message = codec.decode(frame);
  return {
    headers: Object.fromEntries(
      Object.entries(message.headers).map(([name, header]) => [name, header.value]),
    ),
    body: JSON.parse(toUtf8(message.body)) as unknown,
  };
};

describe('event-stream frames', () => {
  it('encode events the AWS SDK decodes, whatever the payload’s characters, the same each time', () => {
    const payload = { contentBlockIndex: 0, delta: { text: 'wörld — 世界 🌍' } };
    const frame = eventFrame('contentBlockDelta', payload);
    expect(decoded(frame)).toEqual({
      headers: {
        ':event-type': 'contentBlockDelta',
        ':content-type': 'application/json',
        ':message-type': 'event',
      },
      body: payload,
    });
    expect(Buffer.from(eventFrame('contentBlockDelta', payload))).toEqual(Buffer.from(frame));
    expect(decoded(jsonEventFrame('messageStop', '{"stopReason":"end_turn"}')).body).toEqual({
      stopReason: 'end_turn',
    });
  });

  it('encode exceptions with their type', () => {
    expect(decoded(exceptionFrame('throttlingException', 'slow down'))).toEqual({
      headers: {
        ':exception-type': 'throttlingException',
        ':content-type': 'application/json',
        ':message-type': 'exception',
      },
      body: { message: 'slow down' },
    });
  });

  it('concatenate into a stream the SDK reads frame by frame', () => {
    const stream = Buffer.from(
      concatFrames([
        eventFrame('messageStart', { role: 'assistant' }),
        eventFrame('metadata', { usage: {} }),
      ]),
    );
    const first = stream.readUInt32BE(0);
    expect(decoded(stream.subarray(0, first)).headers[':event-type']).toBe('messageStart');
    expect(decoded(stream.subarray(first)).headers[':event-type']).toBe('metadata');
  });
});
