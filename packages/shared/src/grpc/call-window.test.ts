import { describe, expect, it } from 'vitest';
import { CallWindow } from './call-window.ts';

const window = (settings: { limit?: number; maxWaiting?: number; maxWaitMs?: number } = {}) =>
  new CallWindow({
    limit: () => settings.limit ?? 2,
    maxWaiting: settings.maxWaiting ?? 10,
    maxWaitMs: settings.maxWaitMs ?? 10_000,
    refuse: (reason) => new Error(`refused: ${reason}`),
  });

describe('CallWindow', () => {
  it('takes free slots at once and admits waiting calls in order as slots free', async () => {
    const calls = window();
    expect(calls.acquire()).toBeUndefined();
    expect(calls.acquire()).toBeUndefined();
    const admitted: number[] = [];
    const third = calls.acquire()!.then(() => admitted.push(3));
    const fourth = calls.acquire()!.then(() => admitted.push(4));
    expect(calls.counts()).toEqual({ inFlight: 2, waiting: 2 });
    calls.release();
    await third;
    expect(admitted).toEqual([3]);
    calls.release();
    await fourth;
    expect(admitted).toEqual([3, 4]);
    expect(calls.counts()).toEqual({ inFlight: 2, waiting: 0 });
  });

  it('refuses a call when too many wait, and one that waited too long, holding no slot for either', async () => {
    const calls = window({ limit: 1, maxWaiting: 1, maxWaitMs: 50 });
    calls.acquire();
    const waited = calls.acquire()!;
    await expect(calls.acquire()).rejects.toThrow('refused: 1 calls are waiting already');
    await expect(waited).rejects.toThrow('refused: no call finished within 50 ms');
    expect(calls.counts()).toEqual({ inFlight: 1, waiting: 0 });
    calls.release();
    expect(calls.acquire()).toBeUndefined();
  });
});
