import { describe, expect, it } from 'vitest';
import { chunkAnswer, wholeAnswer } from '../../testkit/src/cache-fixtures.ts';
import { type CacheEntry, checkStorable, decodeEntry, encodeEntry, isStorable } from './index.ts';

const entry: CacheEntry = {
  id: 'entry-1',
  scope: 'vk_1',
  hash: 'a'.repeat(64),
  context: 'b'.repeat(64),
  vector: new Float32Array([0.6, 0.8, 0]),
  createdAt: 1_000,
  expiresAt: 301_000,
  provider: 'openai',
  model: 'gpt-4o-mini',
  answer: wholeAnswer('hi'),
};

describe('cache entries', () => {
  it('round-trip through JSON, the id first and the vector exact', () => {
    const text = encodeEntry(entry);
    expect(text.startsWith('{"id":"entry-1",')).toBe(true);
    const decoded = decodeEntry(text);
    expect(decoded).toEqual(entry);
    expect(decoded.vector).toBeInstanceOf(Float32Array);
    const withoutVector = { ...entry, vector: undefined, context: undefined };
    expect(decodeEntry(encodeEntry(withoutVector))).toEqual({
      ...entry,
      vector: undefined,
      context: undefined,
    });
  });

  it('refuses what is not an entry', () => {
    expect(() => decodeEntry('{not json')).toThrow();
    expect(() => decodeEntry(JSON.stringify({ ...JSON.parse(encodeEntry(entry)), hash: 'short' }))).toThrow();
    expect(() =>
      decodeEntry(JSON.stringify({ ...JSON.parse(encodeEntry(entry)), id: 'has space' })),
    ).toThrow();
    expect(() => decodeEntry(JSON.stringify({ ...JSON.parse(encodeEntry(entry)), vector: 'AAA' }))).toThrow();
    const noAnswer = {
      ...JSON.parse(encodeEntry(entry)),
      answer: { kind: 'whole', response: { error: {} } },
    };
    expect(() => decodeEntry(JSON.stringify(noAnswer))).toThrow();
  });
});

describe('isStorable', () => {
  it('takes complete answers, whole or streamed', () => {
    expect(isStorable(wholeAnswer('done'))).toBe(true);
    expect(isStorable(chunkAnswer(['a', 'b']))).toBe(true);
    const truncated = wholeAnswer('cut at max_tokens');
    truncated.response.choices[0]!.finish_reason = 'length';
    expect(isStorable(truncated)).toBe(true);
  });

  it('refuses errors and partial answers, saying why', () => {
    expect(checkStorable({ error: { message: 'boom' } })).toEqual({
      storable: false,
      reason: 'not an answer',
    });
    expect(checkStorable(new Error('boom')).storable).toBe(false);
    const filtered = wholeAnswer('half');
    filtered.response.choices[0]!.finish_reason = 'content_filter';
    expect(checkStorable(filtered)).toEqual({ storable: false, reason: 'choice 0 did not finish' });
    const empty = wholeAnswer('');
    empty.response.choices = [];
    expect(checkStorable(empty)).toEqual({ storable: false, reason: 'no choices' });
    const withError = wholeAnswer('x');
    expect(
      checkStorable({ ...withError, response: { ...withError.response, error: { message: 'late' } } })
        .storable,
    ).toBe(false);
    const cut = chunkAnswer(['a']);
    expect(isStorable({ kind: 'chunks', chunks: cut.chunks.slice(0, 2) })).toBe(false);
    expect(
      isStorable({ kind: 'chunks', chunks: [...cut.chunks, { ...cut.chunks[0]!, error: { message: 'x' } }] }),
    ).toBe(false);
    expect(isStorable({ kind: 'chunks', chunks: [] })).toBe(false);
  });
});
