import { describe, expect, it } from 'vitest';
import { truncateUtf8 } from './log-content.ts';

describe('truncateUtf8', () => {
  it('keeps a text that fits, whatever its characters', () => {
    expect(truncateUtf8('short', 5)).toBe('short');
    expect(truncateUtf8('é🚀', 6)).toBe('é🚀');
    expect(truncateUtf8('', 0)).toBe('');
  });

  it('cuts at the last whole character within the byte limit', () => {
    expect(truncateUtf8('abcdef', 3)).toBe('abc');
    expect(truncateUtf8('aé', 2)).toBe('a');
    expect(truncateUtf8('日本語', 8)).toBe('日本');
    // A surrogate pair is one 4-byte character: never half of it.
    expect(truncateUtf8('a🚀b', 4)).toBe('a');
    expect(truncateUtf8('a🚀b', 5)).toBe('a🚀');
    expect(truncateUtf8('abc', 0)).toBe('');
  });
});
