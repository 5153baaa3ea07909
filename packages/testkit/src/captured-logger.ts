import { Writable } from 'node:stream';
import { createLogger, type Logger } from '@gw/shared';

/** A logger whose lines (as written, after redaction) a test reads back: to prove no secret reaches them. */
export function capturedLogger(service = 'test'): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return { logger: createLogger({ service, destination }), lines };
}
