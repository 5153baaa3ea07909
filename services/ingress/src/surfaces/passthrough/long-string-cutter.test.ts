import { describe, expect, it } from 'vitest';
import { KEPT_STRING_BYTES, LongStringCutter } from './long-string-cutter.ts';

/** The cutter's copy of JSON text fed in pieces of the given size. */
function cut(json: string, pieceSize: number): string {
  const cutter = new LongStringCutter();
  const bytes = Buffer.from(json);
  for (let at = 0; at < bytes.length; at += pieceSize) cutter.push(bytes.subarray(at, at + pieceSize));
  return cutter.text();
}

describe('LongStringCutter', () => {
  it('keeps JSON whose strings are short as it is, whatever the pieces', () => {
    const json = JSON.stringify({ a: 'x"y\\z', b: ['é', '\u0001'], c: { d: 1.5, e: null } });
    for (const size of [1, 2, 3, 7, 1_000]) expect(cut(json, size)).toBe(json);
  });

  it('cuts a long string to its first bytes and keeps what follows it', () => {
    const json = JSON.stringify({
      data: [{ b64_json: 'A'.repeat(3_000_000) }],
      usage: { output_tokens: 4_160 },
    });
    for (const size of [65_536, 4_093]) {
      const copy = cut(json, size);
      expect(copy.length).toBe(json.length - 3_000_000 + KEPT_STRING_BYTES);
      expect(JSON.parse(copy)).toEqual({
        data: [{ b64_json: 'A'.repeat(KEPT_STRING_BYTES) }],
        usage: { output_tokens: 4_160 },
      });
    }
  });

  it('cuts only after a whole escape sequence, so the copy is still JSON', () => {
    for (let shift = 0; shift < 7; shift++) {
      const value = `${'b'.repeat(KEPT_STRING_BYTES - 3 + shift)}${'\u0007"\\'.repeat(40)}`;
      const json = JSON.stringify({ text: value, n: 2 });
      for (const size of [1, 5, 4_093]) {
        const parsed = JSON.parse(cut(json, size)) as { text: string; n: number };
        expect(parsed.n).toBe(2);
        expect(value.startsWith(parsed.text)).toBe(true);
        expect(parsed.text.length).toBeGreaterThanOrEqual(KEPT_STRING_BYTES - 6);
      }
    }
  });

  it('cuts through a character of several bytes as U+FFFD, still JSON', () => {
    const json = JSON.stringify({ text: `a${'é'.repeat(KEPT_STRING_BYTES)}`, n: 3 });
    const parsed = JSON.parse(cut(json, 1_000)) as { text: string; n: number };
    expect(parsed).toEqual({ text: `a${'é'.repeat(KEPT_STRING_BYTES / 2 - 1)}\uFFFD`, n: 3 });
  });
});
