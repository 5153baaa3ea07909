// A stage sees every item of a stream and its end exactly once, whether the stream finishes, fails or is
// abandoned by its reader (a client that went away): that is when settlement happens.
import { describe, expect, it } from 'vitest';
import { observeStream } from './stage.ts';

async function* numbers(failAfter?: number) {
  for (let value = 1; value <= 3; value++) {
    if (failAfter !== undefined && value > failAfter) throw new Error('upstream broke');
    yield value;
  }
}

function watched(source: AsyncIterable<number>) {
  const seen: number[] = [];
  let ends = 0;
  const stream = observeStream(source, { item: (value) => seen.push(value), end: () => ends++ });
  return { stream, seen, ends: () => ends };
}

describe('observeStream', () => {
  it('passes every item through and ends once when the stream finishes', async () => {
    const { stream, seen, ends } = watched(numbers());
    const read: number[] = [];
    for await (const value of stream) read.push(value);
    expect(read).toEqual([1, 2, 3]);
    expect(seen).toEqual([1, 2, 3]);
    expect(ends()).toBe(1);
  });

  it('ends once when the stream fails, and the failure reaches the reader', async () => {
    const { stream, seen, ends } = watched(numbers(1));
    await expect(
      (async () => {
        for await (const _ of stream);
      })(),
    ).rejects.toThrow('upstream broke');
    expect(seen).toEqual([1]);
    expect(ends()).toBe(1);
  });

  it('ends once when the reader stops early, and closes the inner stream', async () => {
    let closed = false;
    async function* source() {
      try {
        yield 1;
        yield 2;
      } finally {
        closed = true;
      }
    }
    const { stream, ends } = watched(source());
    for await (const _ of stream) break;
    expect(ends()).toBe(1);
    expect(closed).toBe(true);
  });
});
