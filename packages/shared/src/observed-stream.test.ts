// A stage sees every item of a stream and its end exactly once, whether the stream finishes, fails or is
// abandoned by its reader (a client that went away): that is when settlement happens.
import { describe, expect, it } from 'vitest';
import { observeStream } from './observed-stream.ts';

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

describe('observeStream on an observed stream', () => {
  /** Two observers, the second added to the stream the first observes: what each saw, in the order seen. */
  function twice(source: AsyncIterable<number>, log: string[] = []) {
    const observer = (name: string) => ({
      item: (value: number) => log.push(`${name} ${value}`),
      end: (error?: unknown) => log.push(`${name} end${error ? ' failed' : ''}`),
    });
    const stream = observeStream(observeStream(source, observer('inner')), observer('outer'));
    return { stream, log };
  }

  it('tells the inner observer of each item first, and of the end', async () => {
    const { stream, log } = twice(numbers());
    const read: number[] = [];
    for await (const value of stream) read.push(value);
    expect(read).toEqual([1, 2, 3]);
    expect(log).toEqual([
      'inner 1',
      'outer 1',
      'inner 2',
      'outer 2',
      'inner 3',
      'outer 3',
      'inner end',
      'outer end',
    ]);
  });

  it('tells both of a failure once', async () => {
    const { stream, log } = twice(numbers(1));
    await expect(
      (async () => {
        for await (const _ of stream);
      })(),
    ).rejects.toThrow('upstream broke');
    expect(log).toEqual(['inner 1', 'outer 1', 'inner end failed', 'outer end failed']);
  });

  it('tells the outer observer first when the reader stops, then closes the source', async () => {
    const log: string[] = [];
    const { stream } = twice(
      (async function* () {
        try {
          yield 1;
          yield 2;
        } finally {
          log.push('closed');
        }
      })(),
      log,
    );
    for await (const _ of stream) break;
    expect(log).toEqual(['inner 1', 'outer 1', 'outer end', 'inner end', 'closed']);
  });
});
