import { createMetrics, GatewayError, networkConfigSchema } from '@gw/shared';
import { describe, expect, it } from 'vitest';
import { ProviderGates } from './provider-gate.ts';

function gates() {
  const metrics = createMetrics({ service: 'test', defaultMetrics: false });
  const load: Array<[number, number]> = [];
  const gates = new ProviderGates({
    metrics,
    onLoad: (_provider, inflight, capacity) => load.push([inflight, capacity]),
  });
  const dropped = async (reason: string) =>
    (await metrics.droppedRequests.get()).values.find((value) => value.labels.reason === reason)?.value ?? 0;
  return { gates, load, dropped };
}

const signal = new AbortController().signal;

describe('ProviderGates', () => {
  it('lets any number through without a concurrency bound, and reports the load', async () => {
    const { gates: gate, load } = gates();
    const network = networkConfigSchema.parse({});
    const releases = await Promise.all([1, 2, 3].map(() => gate.acquire('openai', network, signal)));
    expect(load.at(-1)).toEqual([3, 0]);
    for (const release of releases) release();
    expect(load.at(-1)).toEqual([0, 0]);
  });

  it('queues past the bound and admits in order as places free up; a second release does nothing', async () => {
    const { gates: gate, load } = gates();
    const network = networkConfigSchema.parse({ concurrency: 1, buffer_size: 5 });
    const first = await gate.acquire('openai', network, signal);
    const order: number[] = [];
    const second = Promise.resolve(gate.acquire('openai', network, signal)).then((release) => {
      order.push(2);
      return release;
    });
    const third = Promise.resolve(gate.acquire('openai', network, signal)).then((release) => {
      order.push(3);
      return release;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([]);
    first();
    first();
    (await second)();
    (await third)();
    expect(order).toEqual([2, 3]);
    expect(Math.max(...load.map(([inflight]) => inflight))).toBe(1);
    expect(load.at(-1)).toEqual([0, 1]);
  });

  it('drops at once with the queue full when drop_excess_requests says so (503 request_dropped, counted)', async () => {
    const { gates: gate, dropped } = gates();
    const network = networkConfigSchema.parse({ concurrency: 1, buffer_size: 1, drop_excess_requests: true });
    const release = await gate.acquire('openai', network, signal);
    const waiting = gate.acquire('openai', network, signal);
    let refusal: unknown;
    try {
      await gate.acquire('openai', network, signal);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(GatewayError);
    expect((refusal as GatewayError).toJSON()).toMatchObject({
      type: 'request_dropped',
      status: 503,
      provider: 'openai',
    });
    expect(await dropped('provider_queue_full')).toBe(1);
    release();
    (await waiting)();
  });

  it('lets a request wait past a full queue otherwise, for at most timeout_ms', async () => {
    const { gates: gate, dropped } = gates();
    const network = networkConfigSchema.parse({ concurrency: 1, buffer_size: 0, timeout_ms: 50 });
    const release = await gate.acquire('openai', network, signal);
    await expect(gate.acquire('openai', network, signal)).rejects.toMatchObject({ type: 'request_dropped' });
    expect(await dropped('provider_queue_timeout')).toBe(1);
    release();
  });

  it('forgets a waiter whose caller went away', async () => {
    const { gates: gate } = gates();
    const network = networkConfigSchema.parse({ concurrency: 1 });
    const release = await gate.acquire('openai', network, signal);
    const abort = new AbortController();
    const waiting = gate.acquire('openai', network, abort.signal);
    abort.abort();
    await expect(waiting).rejects.toMatchObject({ type: 'cancelled' });
    release();
    // The place went to nobody: the next request takes it at once.
    const next = gate.acquire('openai', network, signal);
    expect(typeof next).toBe('function');
  });
});
