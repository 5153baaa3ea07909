import { describe, expect, it } from 'vitest';
import {
  MULTIPART_SCAN_LIMIT,
  multipartBoundary,
  replaceModel,
  scanMultipartModel,
} from './multipart-model.ts';

const BOUNDARY = 'XyZ';
const part = (name: string, value: string, filename?: string) =>
  `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n\r\n${value}\r\n`;

async function* pieces(text: string | Buffer, size: number) {
  const bytes = Buffer.from(text);
  for (let offset = 0; offset < bytes.length; offset += size) yield bytes.subarray(offset, offset + size);
}

async function rest(iterator: AsyncIterator<Uint8Array>) {
  const chunks: Buffer[] = [];
  for (let next = await iterator.next(); !next.done; next = await iterator.next())
    chunks.push(Buffer.from(next.value));
  return Buffer.concat(chunks);
}

describe('multipart model scan', () => {
  it('reads the boundary of a content type', () => {
    expect(multipartBoundary('multipart/form-data; boundary=abc')).toBe('abc');
    expect(multipartBoundary('multipart/form-data; boundary="a b"; charset=x')).toBe('a b');
    expect(multipartBoundary('application/json')).toBeUndefined();
  });

  it('finds a model that comes before the file, whatever the chunking, and rewrites it', async () => {
    const body = `${part('model', 'openai/whisper-1')}${part('file', 'AUDIO', 'a.wav')}--${BOUNDARY}--\r\n`;
    for (const size of [1, 3, 7, 64, 4096]) {
      const scan = await scanMultipartModel(pieces(body, size), BOUNDARY);
      expect(scan.model, `pieces of ${size}`).toBe('openai/whisper-1');
      const whole = Buffer.concat([replaceModel(scan, 'whisper-1'), await rest(scan.rest)]).toString();
      expect(whole).toBe(body.replace('openai/whisper-1', 'whisper-1'));
    }
  });

  it('stops at the first file part, never reading the file', async () => {
    const file = Buffer.alloc(1024 * 1024, 1);
    const body = Buffer.concat([
      Buffer.from(part('file', '', 'a.wav').slice(0, -2)),
      file,
      Buffer.from(`\r\n${part('model', 'whisper-1')}--${BOUNDARY}--\r\n`),
    ]);
    const scan = await scanMultipartModel(pieces(body, 16 * 1024), BOUNDARY);
    expect(scan.model).toBeUndefined();
    expect(scan.head.length).toBeLessThanOrEqual(16 * 1024);
    expect(Buffer.concat([scan.head, await rest(scan.rest)]).equals(body)).toBe(true);
  });

  it('gives up after the scan limit', async () => {
    const body = `${part('prompt', 'x'.repeat(MULTIPART_SCAN_LIMIT * 2))}${part('model', 'm')}`;
    const scan = await scanMultipartModel(pieces(body, 8 * 1024), BOUNDARY);
    expect(scan.model).toBeUndefined();
    expect(Buffer.concat([scan.head, await rest(scan.rest)]).toString()).toBe(body);
  });
});
