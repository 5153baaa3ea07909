import { describe, expect, it } from 'vitest';
import { parseJson } from './body.ts';

const nested = (depth: number, open: string, close: string, inner = '1') =>
  Buffer.from(open.repeat(depth) + inner + close.repeat(depth));

describe('parseJson', () => {
  it('parses a JSON body', () => {
    expect(parseJson(Buffer.from('{"a":[1,{"b":"]]]}}}"}]}'))).toEqual({ a: [1, { b: ']]]}}}' }] });
  });

  it('takes 128 levels of arrays and objects, and refuses 129 with a 400 that says so', () => {
    expect(() => parseJson(nested(128, '[', ']'))).not.toThrow();
    expect(() => parseJson(nested(128, '{"a":', '}'))).not.toThrow();
    for (const body of [nested(129, '[', ']'), nested(129, '{"a":', '}'), nested(100_000, '[', ']')]) {
      expect(() => parseJson(body)).toThrow(
        expect.objectContaining({
          type: 'invalid_request',
          message: 'request body nests arrays and objects deeper than 128 levels',
        }),
      );
    }
  });

  it('counts brackets inside strings as text, not nesting', () => {
    const text = JSON.stringify({ content: '['.repeat(10_000) });
    expect(parseJson(Buffer.from(text))).toEqual({ content: '['.repeat(10_000) });
  });

  it('refuses an empty body, bytes that are not UTF-8 and text that is not JSON, naming the problem', () => {
    expect(() => parseJson(Buffer.alloc(0))).toThrow(/request body is empty/);
    expect(() => parseJson(Buffer.from([0x7b, 0xff, 0x7d]))).toThrow(/not valid UTF-8/);
    expect(() => parseJson(Buffer.from('{"a":'))).toThrow(/request body is not valid JSON/);
  });
});
