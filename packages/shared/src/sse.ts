/** One server-sent event. */
export interface SseEvent {
  event: string | undefined;
  data: string;
  /** The line break that ended the event when it was not `\n` (Gemini ends events with `\r\n\r\n`). */
  lineBreak?: '\r\n' | '\r' | undefined;
}

/**
 * An event framed for the wire again, as its source sent it (a data line per line of its data, its line
 * breaks); comments and `id:`/`retry:` fields, which no provider sends, are not kept.
 */
export function frameSseEvent(event: SseEvent): string {
  const eol = event.lineBreak ?? '\n';
  const data = event.data.includes('\n') ? event.data.replaceAll('\n', `${eol}data: `) : event.data;
  const framed = event.event === undefined ? `data: ${data}` : `event: ${event.event}${eol}data: ${data}`;
  return `${framed}${eol}${eol}`;
}

/**
 * Most characters one event may hold (its unfinished line and its data lines): far above the largest real
 * event (a streamed image's base64 piece is a few MB), and a bound on what a stream that never ends an event
 * can make gw keep.
 */
const MAX_EVENT_CHARS = 32 * 1024 * 1024;

/** A stream that never ended an event within MAX_EVENT_CHARS. */
export class SseEventTooLong extends Error {
  constructor(limit: number) {
    super(`sent an SSE event longer than ${limit} characters`);
  }
}

/**
 * The one SSE parser of gw: feed it bytes as they arrive, split anywhere (inside a UTF-8 character, inside
 * a line, inside `\r\n`), and it yields complete events. An event longer than `maxEventChars`
 * (MAX_EVENT_CHARS by default) throws SseEventTooLong.
 */
export class SseParser {
  private readonly decoder = new TextDecoder('utf-8');
  private buffer = '';
  private event: string | undefined;
  private data: string[] = [];
  private dataChars = 0;
  private pendingCarriageReturn = false;
  private readonly maxEventChars: number;

  constructor(maxEventChars = MAX_EVENT_CHARS) {
    this.maxEventChars = maxEventChars;
  }

  push(bytes: Uint8Array): SseEvent[] {
    return this.pushText(this.decoder.decode(bytes, { stream: true }));
  }

  end(): SseEvent[] {
    const events = this.pushText(`${this.decoder.decode()}\n\n`);
    return events;
  }

  private pushText(text: string): SseEvent[] {
    let input = text;
    if (this.pendingCarriageReturn && input.startsWith('\n')) input = input.slice(1);
    this.pendingCarriageReturn = false;
    // What is kept between pushes holds no line break: only the new text needs scanning.
    const scanFrom = this.buffer.length;
    this.buffer += input;
    const events: SseEvent[] = [];
    const buffer = this.buffer;
    let start = 0;
    // The next LF and CR at or after `start`, found by indexOf (native scanning) rather than a loop over every
    // character in JS: an event's data is hundreds of characters and its line breaks a few. -1: none left.
    let nextLf = buffer.indexOf('\n', scanFrom);
    let nextCr = buffer.indexOf('\r', scanFrom);
    while (nextLf !== -1 || nextCr !== -1) {
      let index = nextCr === -1 || (nextLf !== -1 && nextLf < nextCr) ? nextLf : nextCr;
      const line = buffer.slice(start, index);
      let lineBreak: '\n' | '\r\n' | '\r' = '\n';
      if (index === nextCr) {
        // A CR that ends the text read so far is taken for a CRLF whose LF comes next (a lone CR is rare).
        if (index + 1 === buffer.length) {
          this.pendingCarriageReturn = true;
          lineBreak = '\r\n';
        } else if (buffer.charCodeAt(index + 1) === 10) {
          index++;
          lineBreak = '\r\n';
        } else lineBreak = '\r';
      }
      start = index + 1;
      this.handleLine(line, events, lineBreak);
      if (nextLf !== -1 && nextLf < start) nextLf = buffer.indexOf('\n', start);
      if (nextCr !== -1 && nextCr < start) nextCr = buffer.indexOf('\r', start);
    }
    this.buffer = this.buffer.slice(start);
    if (this.buffer.length + this.dataChars > this.maxEventChars) {
      throw new SseEventTooLong(this.maxEventChars);
    }
    return events;
  }

  private handleLine(line: string, events: SseEvent[], lineBreak: '\n' | '\r\n' | '\r'): void {
    if (line === '') {
      if (this.data.length > 0) {
        const event: SseEvent = { event: this.event, data: this.data.join('\n') };
        if (lineBreak !== '\n') event.lineBreak = lineBreak;
        events.push(event);
      }
      this.data = [];
      this.dataChars = 0;
      this.event = undefined;
      return;
    }
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') {
      this.data.push(value);
      this.dataChars += value.length;
    } else if (field === 'event') this.event = value;
  }
}
