// A cluster upgraded from a release that kept every governance counter under one `{gov}` tag: its spend, request
// counts and open reservations are moved to their owners at the first start, so limits hold across the upgrade
// and a reservation opened before it is settled against its owners' counters.
import { randomUUID } from 'node:crypto';
import { parseGatewayConfig, silentLogger } from '@gw/shared';
import { RedisStore } from '@gw/shared/store';
import { capturedLogger, deleteRedisKeys } from '@gw/testkit';
import { Redis } from 'ioredis';
import { afterAll, expect, it } from 'vitest';
import { liveGovernance } from '../testing/live-governance.ts';
import { GovernanceCore } from './governance-core.ts';
import type { AuthorizeRequest } from './governance-service.ts';
import { migrateOneTagLayout } from './one-tag-migration.ts';

const REDIS_URL = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const prefix = `gw-test:gov-migration:${randomUUID()}:`;
const admin = new Redis(REDIS_URL);
afterAll(async () => {
  admin.disconnect();
  await deleteRedisKeys(REDIS_URL, prefix);
});

const HOUR = 3_600_000;
const config = parseGatewayConfig({
  governance: {
    pricing: { 'gpt-test': { input: 1, output: 1 } },
    settings: { sweep_interval_ms: 0, settle_deadline_ms: 60_000 },
  },
});
const budget = { max_limit: 1, reset_duration: '1M' };

it("moves an upgraded cluster's counters to their owners and settles its open reservation against them", async () => {
  const store = await RedisStore.connect({ url: REDIS_URL, prefix });
  // Mid-hour: the key's hourly request window does not roll over during the test.
  const clock = { now: Math.floor(Date.now() / HOUR) * HOUR + HOUR / 2 };
  const start = (options: { migrate?: boolean; logger?: ReturnType<typeof silentLogger> } = {}) =>
    GovernanceCore.start({
      store,
      logger: silentLogger(),
      ...liveGovernance(config),
      now: () => clock.now,
      ...(options.migrate && {
        migrate: (repository) =>
          migrateOneTagLayout({ store, repository, logger: options.logger ?? silentLogger() }),
      }),
    });
  try {
    const before = await start();
    const manage = before.manage.bind(before);
    const unit = await manage({
      action: 'create',
      collection: 'business-units',
      body: { name: 'bu', budget },
    });
    const customer = await manage({
      action: 'create',
      collection: 'customers',
      body: { name: 'acme', budget },
    });
    const team = await manage({
      action: 'create',
      collection: 'teams',
      body: { name: 'platform', customer_id: customer.id, business_unit_id: unit.id, budget },
    });
    const key = (await manage({
      action: 'create',
      collection: 'virtual-keys',
      body: {
        name: 'spender',
        team_id: team.id,
        budget,
        rate_limit: { request_max_limit: 3, request_reset_duration: '1h' },
        provider_configs: [{ provider: 'openai', allowed_models: ['*'], budget }],
      },
    })) as { id: string; value: string };
    const request = (): AuthorizeRequest => ({
      requestId: randomUUID(),
      kind: 'llm',
      virtualKey: key.value,
      headerNames: [],
      targets: [{ provider: 'openai', model: 'gpt-test' }],
    });
    const settle = (core: GovernanceCore, plan: Awaited<ReturnType<GovernanceCore['authorize']>>) =>
      core.settle({
        requestId: plan.settlement!.reservationId,
        settlement: plan.settlement!,
        provider: 'openai',
        model: 'gpt-test',
        // 30 tokens at $1 per million: 30 micro-USD.
        usage: { prompt_tokens: 20, completion_tokens: 10, total_tokens: 30 },
      });
    await settle(before, await before.authorize(request()));
    const open = await before.authorize(request());
    const owners = [
      ['virtual-keys', key.id],
      ['teams', team.id],
      ['customers', customer.id],
      ['business-units', unit.id],
    ] as const;
    const usageOf = (core: GovernanceCore) =>
      Promise.all(owners.map(([collection, id]) => core.manage({ action: 'usage', collection, id })));
    const used = await usageOf(before);
    await before.close();

    // What the earlier release left: the same counters and journal under `{gov}`, plans naming no owner.
    const moved = await toOneTagLayout();
    expect(moved).toEqual({ counters: 6, reservations: 1 });

    const { logger, lines } = capturedLogger();
    const after = await start({ migrate: true, logger });
    try {
      expect(await usageOf(after)).toEqual(used);
      const logged = lines.map((line) => JSON.parse(line)).find((line) => /moved counters/.test(line.msg));
      expect(logged).toMatchObject({ level: 30, counters: 6, ownerCounters: 6, left: 0, reservations: 1 });

      // The open reservation settles against its owners' counters: every budget charged both requests once.
      await settle(after, open);
      for (const report of await usageOf(after)) {
        for (const section of report.usage) {
          for (const entry of section.entries) {
            if (entry.kind === 'budget') expect(entry.used, section.scope).toBeCloseTo(0.00006, 12);
          }
        }
      }
      // Two requests counted before the upgrade: the third passes, the fourth is over the limit of 3.
      await after.authorize(request());
      await expect(after.authorize(request())).rejects.toMatchObject({ type: 'request_limit_exceeded' });
    } finally {
      await after.close();
    }
  } finally {
    await store.close();
  }
});

/**
 * Puts the state of this test's prefix back as the one-tag release kept it: each `{<owner>}counter:<key>` as
 * `{gov}counter:<key>` (value and expiry), and each open reservation in `{gov}reservations` and
 * `{gov}reservation-deadlines` with its plan's counters naming no owner.
 */
async function toOneTagLayout(): Promise<{ counters: number; reservations: number }> {
  const moved = { counters: 0, reservations: 0 };
  for (const name of await admin.keys(`${prefix}{*}counter:*`)) {
    const [, owner, key] = /\{([^}]+)\}counter:(.*)$/.exec(name)!;
    if (owner === 'gov') continue;
    const [value, expireAt] = await Promise.all([admin.get(name), admin.pexpiretime(name)]);
    await admin.set(`${prefix}{gov}counter:${key}`, value!, 'PXAT', expireAt);
    await admin.del(name);
    moved.counters++;
  }
  for (let shard = 0; shard < 64; shard++) {
    const journal = `${prefix}{res:${shard}}reservations`;
    const deadlines = `${prefix}{res:${shard}}reservation-deadlines`;
    for (const [id, stored] of Object.entries(await admin.hgetall(journal))) {
      const newline = stored.indexOf('\n');
      const plan = JSON.parse(stored.slice(newline + 1));
      const ownerless = (counters: Array<{ owner?: string }>) =>
        counters.map(({ owner: _, ...rest }) => rest);
      plan.counters = ownerless(plan.counters);
      for (const provider of Object.keys(plan.providerCounters)) {
        plan.providerCounters[provider] = ownerless(plan.providerCounters[provider]);
      }
      await admin.hset(
        `${prefix}{gov}reservations`,
        id,
        `${stored.slice(0, newline + 1)}${JSON.stringify(plan)}`,
      );
      await admin.zadd(`${prefix}{gov}reservation-deadlines`, (await admin.zscore(deadlines, id))!, id);
      moved.reservations++;
    }
    await admin.del(journal, deadlines);
  }
  return moved;
}
