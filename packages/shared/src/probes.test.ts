// Readiness: every check passes and the process is not draining; checks evaluated at most once a second,
// whoever asks; a store counted unreachable only once it has failed for its grace. Liveness: the heartbeat ran
// late or not at all past the bound.
import { waitFor } from '@gw/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { Probes, probeStatus, storeCheck } from './probes.ts';

const made: Probes[] = [];
afterEach(() => {
  for (const probes of made.splice(0)) probes[Symbol.dispose]();
});
const probes = (options?: { stallMs?: number }) => {
  const created = new Probes(options);
  made.push(created);
  return created;
};

describe('Probes', () => {
  it('is ready when every check passes, names each failing one, and is draining from drain() on', async () => {
    let routers = 0;
    const subject = probes()
      .require('router', () => (routers > 0 ? undefined : 'no router replica connected'))
      .require('store', async () => undefined);
    const before = await subject.readiness();
    expect(before).toEqual({
      status: 'not_ready',
      checks: { router: 'no router replica connected', store: 'ok' },
    });
    expect(probeStatus(before)).toBe(503);
    routers = 1;
    // The report answers for a second; a new check (require) starts a new one.
    expect((await subject.readiness()).status).toBe('not_ready');
    subject.require('store', async () => undefined);
    const after = await subject.readiness();
    expect(after).toEqual({ status: 'ready', checks: { router: 'ok', store: 'ok' } });
    expect(probeStatus(after)).toBe(200);
    subject.drain();
    expect(subject.draining).toBe(true);
    expect(await subject.readiness()).toEqual({ status: 'draining', checks: {} });
  });

  it('evaluates the checks once for callers that ask together, and counts one that throws as failed', async () => {
    let evaluations = 0;
    const subject = probes()
      .require('counted', async () => {
        evaluations++;
        return undefined;
      })
      .require('broken', () => {
        throw new Error('boom');
      });
    const reports = await Promise.all([subject.readiness(), subject.readiness(), subject.readiness()]);
    expect(evaluations).toBe(1);
    for (const report of reports)
      expect(report).toEqual({ status: 'not_ready', checks: { counted: 'ok', broken: 'failed: boom' } });
  });

  it('says a store is unreachable once its reads have failed for the grace, and reachable at the next answer', async () => {
    let up = true;
    const store = {
      readEpoch: async () => {
        if (!up) throw new Error('the state store (Redis) is unavailable');
        return 'epoch';
      },
    };
    const check = storeCheck(store, 200);
    expect(await check()).toBeUndefined();
    up = false;
    // The first failure is within the grace.
    expect(await check()).toBeUndefined();
    await waitFor(async () => (await check()) === 'unreachable', { what: 'the grace to pass' });
    up = true;
    expect(await check()).toBeUndefined();
  });

  it('is live while the heartbeat keeps time, stalled when the event loop stood still past the bound', async () => {
    const subject = probes({ stallMs: 200 });
    expect(subject.liveness()).toMatchObject({ status: 'live' });
    // The event loop stands still for 1.5 s: the heartbeat (every second) is at least half a second overdue.
    const until = performance.now() + 1_500;
    while (performance.now() < until) {}
    const stalled = subject.liveness();
    expect(stalled.status).toBe('stalled');
    expect(stalled.event_loop_stall_ms).toBeGreaterThanOrEqual(400);
    expect(probeStatus(stalled)).toBe(503);
    // It keeps time again from the next beat on.
    await waitFor(() => subject.liveness().status === 'live', { timeoutMs: 5_000, what: 'live again' });
  });
});
