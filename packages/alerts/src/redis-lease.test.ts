import type { ProviderHealthReport } from '@gw/shared/health';
import { connectRedis, type RedisConnection, RedisStore } from '@gw/shared/store';
import { deleteRedisKeys, startFakeWebhookReceiver, testRedisPrefix, waitFor } from '@gw/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { AlertDispatcher } from './alert-dispatcher.ts';
import { AlertEngine } from './alert-engine.ts';
import { AlertRegistry } from './alert-registry.ts';
import { alertChannelSchema, alertRuleSchema } from './alert-schemas.ts';
import { RedisLease } from './redis-lease.ts';

const url = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const prefix = testRedisPrefix();
const SECRET = 'lease-test-secret-0123';
// Well above the 200 ms interval, so a loaded machine's event-loop stall does not cost the holder its lease.
const LEASE_MS = 2_500;

afterAll(async () => {
  await deleteRedisKeys(url, prefix);
});

let state: ProviderHealthReport['state'] = 'failed';
const health = {
  health: async (): Promise<ProviderHealthReport[]> => [
    {
      provider: 'openai',
      state,
      since: 0,
      score: 0,
      weight_multiplier: 0,
      requests: 10,
      failures: 10,
      error_rate: 1,
      latency_ms: { p50: null, p95: null, ewma: null },
      utilization: 0,
      momentum: 0,
      transitions: [],
      keys: [],
      models: [],
      targets: [],
    },
  ],
};

/** One admin replica: its own store connection, lease connection and evaluator. */
async function replica() {
  const store = await RedisStore.connect({ url, prefix });
  const redis: RedisConnection = connectRedis(url, { maxRetriesPerRequest: 0, enableOfflineQueue: false });
  const registry = new AlertRegistry({ store });
  const dispatcher = new AlertDispatcher({ registry, backoffMs: 10 });
  const lease = await RedisLease.create({ redis, prefix, leaseMs: LEASE_MS });
  const engine = new AlertEngine({ registry, dispatcher, sources: { health }, lease, intervalMs: 200 });
  return { store, redis, registry, lease, engine, dispatcher };
}

describe('RedisLease', () => {
  it('one replica evaluates; when it dies the other takes over within the lease time, without sending again', async () => {
    const receiver = await startFakeWebhookReceiver(SECRET);
    const first = await replica();
    const second = await replica();
    try {
      await first.registry.putChannel(
        alertChannelSchema.parse({ id: 'hook', type: 'webhook', url: receiver.url, secret: SECRET }),
      );
      await first.registry.putRule(
        alertRuleSchema.parse({ id: 'health', kind: 'provider_health', channels: ['hook'] }),
      );
      expect(await first.lease.hold()).toBe(true);
      expect(await second.lease.hold()).toBe(false);
      first.engine.start();
      second.engine.start();
      await waitFor(() => receiver.requests.length === 1, { what: 'the first alert' });
      // Several intervals: only the holder evaluates, and the condition still firing sends nothing more.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(first.engine.leader).toBe(true);
      expect(second.engine.leader).toBe(false);
      expect(receiver.requests).toHaveLength(1);

      // The holder dies: its connection is gone, its renewals stop, and it never releases the lease.
      const diedAt = Date.now();
      first.redis.disconnect();
      await waitFor(() => second.engine.leader, {
        what: 'the second replica to take the lease',
        timeoutMs: 8_000,
      });
      // Not before the lease ran out (its last renewal was at most one interval before), and within the lease
      // time plus the interval of the replica that asks, with slack for a loaded machine.
      const takeover = Date.now() - diedAt;
      expect(takeover).toBeGreaterThan(LEASE_MS - 500);
      expect(takeover).toBeLessThan(LEASE_MS + 1_500);
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(receiver.requests).toHaveLength(1);

      // The new holder carries on: the condition clears, and it sends the resolve.
      state = 'healthy';
      await waitFor(() => receiver.requests.length === 2, { what: 'the resolve' });
      expect((receiver.requests[1]!.body as { action: string }).action).toBe('resolve');
      // The delivery's outcome is recorded once the receiver has answered, a moment after it got the request.
      const history = await waitFor(
        async () => {
          const recorded = await second.registry.history({ limit: 10 });
          return recorded.entries.length === 2 && recorded;
        },
        { what: 'the resolve in the history' },
      );
      expect(history.entries.map((entry) => [entry.action, entry.outcome])).toEqual([
        ['resolve', 'sent'],
        ['trigger', 'sent'],
      ]);
    } finally {
      await first.engine.close();
      await second.engine.close();
      await receiver.close();
      for (const { store, redis } of [first, second]) {
        await store.close();
        redis.disconnect();
      }
    }
  });

  it('release hands the lease over at once, and never releases a lease another replica took', async () => {
    const redis = connectRedis(url, {});
    try {
      const one = await RedisLease.create({ redis, prefix: `${prefix}release:`, leaseMs: 200 });
      const two = await RedisLease.create({ redis, prefix: `${prefix}release:`, leaseMs: 200 });
      expect(await one.hold()).toBe(true);
      expect(await one.hold()).toBe(true);
      expect(await two.hold()).toBe(false);
      await one.release();
      expect(await two.hold()).toBe(true);
      await one.release();
      expect(await one.hold()).toBe(false);
      expect(await redis.pttl(`${prefix}release:alerts:lease`)).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
    }
  });
});
