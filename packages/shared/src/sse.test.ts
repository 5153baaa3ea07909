import { describe, expect, it } from 'vitest';
import { frameSseEvent, SseEventTooLong, SseParser } from './sse.ts';

const stream = 'event: start\ndata: {"a":"é"}\n\n: comment\ndata: line1\ndata: line2\r\n\r\ndata: [DONE]\n\n';

function parseInSlices(text: string, sizes: number[]) {
  const bytes = Buffer.from(text, 'utf8');
  const parser = new SseParser();
  const events = [];
  let offset = 0;
  for (let index = 0; offset < bytes.length; index++) {
    const size = sizes[index % sizes.length]!;
    events.push(...parser.push(bytes.subarray(offset, offset + size)));
    offset += size;
  }
  events.push(...parser.end());
  return events;
}

describe('SseParser', () => {
  it.each([[[1]], [[2]], [[3, 1, 7]], [[1000]]])(
    'yields the same events whatever the byte split (%j)',
    (sizes) => {
      expect(parseInSlices(stream, sizes)).toEqual([
        { event: 'start', data: '{"a":"é"}' },
        { event: undefined, data: 'line1\nline2', lineBreak: '\r\n' },
        { event: undefined, data: '[DONE]' },
      ]);
    },
  );

  it('takes a lone CR for a line break, mixed with LF and CRLF, whatever the byte split', () => {
    const mixed = 'data: a\rdata: b\r\rdata: c\n\r\ndata: d\r\n\n';
    expect(parseInSlices(mixed, [1000])).toEqual([
      { event: undefined, data: 'a\nb', lineBreak: '\r' },
      { event: undefined, data: 'c', lineBreak: '\r\n' },
      { event: undefined, data: 'd' },
    ]);
    // A push that ends in a CR cannot tell a lone CR from a CRLF's first half: the event's recorded line break
    // may then read CRLF, its data never differs.
    for (const sizes of [[1], [2], [4, 1], [3, 5, 2]]) {
      expect(parseInSlices(mixed, sizes).map((event) => event.data)).toEqual(['a\nb', 'c', 'd']);
    }
  });

  it('splits a CRLF pair across two pushes without an empty event', () => {
    const parser = new SseParser();
    expect(parser.push(Buffer.from('data: x\r'))).toEqual([]);
    expect(parser.push(Buffer.from('\n\r'))).toEqual([{ event: undefined, data: 'x', lineBreak: '\r\n' }]);
    expect(parser.push(Buffer.from('\ndata: y\n\n'))).toEqual([{ event: undefined, data: 'y' }]);
  });

  it('keeps the line break that ended an event, so a relay frames it again as it came', () => {
    const gemini = 'data: {"a":1}\r\n\r\nevent: x\ndata: b\ndata: c\n\n';
    const events = parseInSlices(gemini, [1]);
    expect(events.map(frameSseEvent).join('')).toBe(gemini);
  });

  it('flushes a last event without a trailing blank line at end', () => {
    const parser = new SseParser();
    expect(parser.push(Buffer.from('data: tail'))).toEqual([]);
    expect(parser.end()).toEqual([{ event: undefined, data: 'tail' }]);
  });

  it('bounds what it keeps of an event that never ends, in one long line or in many data lines', () => {
    const long = new SseParser(1_000);
    expect(long.push(Buffer.from(`data: ${'x'.repeat(500)}`))).toEqual([]);
    expect(() => long.push(Buffer.from('y'.repeat(600)))).toThrow(SseEventTooLong);
    const many = new SseParser(1_000);
    expect(() => {
      for (let line = 0; line < 100; line++) many.push(Buffer.from(`data: ${'z'.repeat(20)}\n`));
    }).toThrow(SseEventTooLong);
    // Events up to the bound pass, and the count starts again at each.
    const fine = new SseParser(1_000);
    for (let event = 0; event < 10; event++) {
      expect(fine.push(Buffer.from(`data: ${'a'.repeat(900)}\n\n`))).toHaveLength(1);
    }
  });
});
