import { describe, expect, it } from 'vitest';
import { backoffMs, sleep } from './backoff.ts';

describe('backoffMs', () => {
  it('doubles per attempt with jitter in [base/2, base], capped', () => {
    const low = () => 0;
    const high = () => 0.999999;
    expect(backoffMs({ attempt: 0, initialMs: 100, maxMs: 5000, random: low })).toBe(50);
    expect(backoffMs({ attempt: 0, initialMs: 100, maxMs: 5000, random: high })).toBe(100);
    expect(backoffMs({ attempt: 3, initialMs: 100, maxMs: 5000, random: high })).toBe(800);
    expect(backoffMs({ attempt: 10, initialMs: 100, maxMs: 5000, random: high })).toBe(5000);
  });

  it('waits at least what Retry-After asks, within the cap', () => {
    expect(
      backoffMs({ attempt: 0, initialMs: 100, maxMs: 5000, retryAfterSeconds: 2, random: () => 0 }),
    ).toBe(2000);
    expect(
      backoffMs({ attempt: 0, initialMs: 100, maxMs: 5000, retryAfterSeconds: 60, random: () => 0 }),
    ).toBe(5000);
  });

  it('sleep rejects at once when the caller cancels', async () => {
    const abort = new AbortController();
    const pending = sleep(10_000, abort.signal);
    abort.abort(new Error('gone'));
    await expect(pending).rejects.toThrow('gone');
  });
});
