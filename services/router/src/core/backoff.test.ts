import { describe, expect, it } from 'vitest';
import { backoffMs, sleep } from './backoff.ts';
import { HealthTracker } from './health.ts';

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

describe('HealthTracker', () => {
  it('classifies by error rate over the window: >2% degraded, >5% failed, then recovers as the window moves', () => {
    let now = 1_000_000;
    const tracker = new HealthTracker({ now: () => now });
    for (let index = 0; index < 97; index++) tracker.record('openai', true);
    for (let index = 0; index < 3; index++) tracker.record('openai', false);
    expect(tracker.snapshot()[0]).toMatchObject({ provider: 'openai', state: 'degraded', requests: 100 });
    for (let index = 0; index < 5; index++) tracker.record('openai', false);
    expect(tracker.snapshot()[0]?.state).toBe('failed');
    now += 61_000;
    tracker.record('openai', true);
    expect(tracker.snapshot()[0]).toMatchObject({ state: 'healthy', requests: 1 });
  });
});
