// Allowances on a real Redis (REDIS_URL, else 127.0.0.1:6379) and on a 3-master Redis Cluster started here: two
// AllowanceStores stand for two ingress replicas, each with its own connection. What is checked is what the issue
// asks: never over a limit whatever the interleaving, slices returned at a period's end and on drain, the rest of a
// killed ingress's slices recovered when its lease ends, a limit lowered while slices are out, settles made in the
// slices held.
import { randomUUID } from 'node:crypto';
import { scaled, startRedisCluster } from '@gw/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { AllowanceStore } from './allowance-store.ts';
import { connectRedis } from './redis-connection.ts';
import { RedisStore } from './redis-store.ts';
import type { AdmitRequest, CounterCheck } from './store.ts';

/** Every case runs on one Redis (REDIS_URL) and on a 3-master Redis Cluster (owners' slots on different nodes). */
const topologies = [
  {
    name: 'one Redis',
    start: async () => ({ url: process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379', stop: async () => {} }),
  },
  { name: 'a 3-master Redis Cluster', start: () => startRedisCluster(3) },
];
/** The topology of the cases running now. */
let url = '';
const opened: Array<{ close(): Promise<void> }> = [];

/** Failures of slice calls with no caller: none are expected but the killed ingress's. */
const failures: unknown[] = [];

async function ingress(
  prefix: string,
  options: { leaseMs?: number; tickMs?: number; killed?: boolean } = {},
) {
  const store = await RedisStore.connect({ url, prefix });
  const { killed, ...timing } = options;
  const allowances = new AllowanceStore({
    store,
    ...timing,
    onError: (error) => {
      if (!killed) failures.push(error);
    },
  });
  opened.push(allowances, store);
  return { store, allowances };
}

afterEach(async () => {
  for (const resource of opened.splice(0).reverse()) await resource.close();
  expect(failures.splice(0)).toEqual([]);
});

const owner = () => `key:${randomUUID()}`;

/** A counter as Redis holds it (slices held included, unlike readCounters), read by an outside connection. */
async function rawCounter(prefix: string, counter: { key: string; owner: string }): Promise<number> {
  const admin = connectRedis(url, {});
  try {
    return Number(await admin.get(`${prefix}{${counter.owner}}counter:${counter.key}`));
  } finally {
    admin.disconnect();
  }
}

function requests(
  counter: { key: string; owner: string },
  limit: number,
  expireAtMs = Date.now() + 3_600_000,
) {
  const check: CounterCheck = { ...counter, limit, need: 1, amount: 1, expireAtMs };
  return (): AdmitRequest => ({
    required: [check],
    alternatives: [],
    reservation: { id: `res_${randomUUID()}`, deadlineMs: Date.now() + 60_000, payload: '{}' },
  });
}

/** Admits `count` requests in waves of `wave`, spread over the ingresses in turn; the number admitted. */
async function burst(
  ingresses: AllowanceStore[],
  request: () => AdmitRequest,
  options: { count: number; wave: number },
) {
  let admitted = 0;
  for (let sent = 0; sent < options.count; sent += options.wave) {
    const answers = await Promise.all(
      Array.from({ length: options.wave }, (_, index) =>
        ingresses[index % ingresses.length]!.admit(request()),
      ),
    );
    admitted += answers.filter((answer) => answer.allowed).length;
  }
  return admitted;
}

/** One ingress that admitted 40 requests of 10 (a budget's reservations) against a counter of its own, from slices. */
async function fortyAdmitted(key: string, options: { tickMs?: number } = {}) {
  const prefix = `gw-allow:${randomUUID()}:`;
  const one = await ingress(prefix, options);
  const counter = { key, owner: owner() };
  const check: CounterCheck = {
    ...counter,
    limit: 100_000,
    need: 1,
    amount: 10,
    expireAtMs: Date.now() + 3_600_000,
  };
  const ids: string[] = [];
  const request = (): AdmitRequest => {
    const id = `res_${randomUUID()}`;
    ids.push(id);
    return {
      required: [check],
      alternatives: [],
      reservation: { id, deadlineMs: Date.now() + 60_000, payload: '{}' },
    };
  };
  expect(await burst([one.allowances], request, { count: 40, wave: 10 })).toBe(40);
  return { prefix, one, counter, check, ids };
}

describe.each(topologies)('AllowanceStore on $name', (topology) => {
  let stop: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    const started = await topology.start();
    url = started.url;
    stop = started.stop;
  }, scaled(60_000));
  afterAll(async () => {
    await stop?.();
  });

  it('admits exactly a limit over two ingresses, most of it from slices, and gives back what is left on drain', async () => {
    const prefix = `gw-allow:${randomUUID()}:`;
    const [one, two] = [await ingress(prefix), await ingress(prefix)];
    const counter = { key: 'r:burst', owner: owner() };
    // Far from the limit slices form; near it admission is exact.
    const request = requests(counter, 1_000);
    expect(await burst([one.allowances, two.allowances], request, { count: 3_000, wave: 100 })).toBe(1_000);
    const stats = [one.allowances.admissions(), two.allowances.admissions()];
    const local = stats.reduce((sum, stat) => sum + stat.local, 0);
    expect(local).toBeGreaterThan(500);
    await Promise.all([one.allowances.close(), two.allowances.close()]);
    expect(await rawCounter(prefix, counter)).toBe(1_000);
  });

  it('never admits past a limit of 100 under 1,000 concurrent requests over two ingresses', async () => {
    const prefix = `gw-allow:${randomUUID()}:`;
    const [one, two] = [await ingress(prefix), await ingress(prefix)];
    const counter = { key: 'r:hundred', owner: owner() };
    const request = requests(counter, 100);
    // Slices form in the first waves; the rest is decided against them and the counter.
    const admitted = await burst([one.allowances, two.allowances], request, { count: 1_000, wave: 50 });
    expect(admitted).toBe(100);
    await Promise.all([one.allowances.close(), two.allowances.close()]);
    expect(await rawCounter(prefix, counter)).toBe(100);
  });

  it('recovers the unarmed rest of a killed ingress’s slice when its lease ends, never more', async () => {
    const prefix = `gw-allow:${randomUUID()}:`;
    const killed = await ingress(prefix, { leaseMs: 300, tickMs: 60_000, killed: true });
    const survivor = await ingress(prefix, { leaseMs: 300, tickMs: 60_000 });
    const counter = { key: 'r:killed', owner: owner() };
    const request = requests(counter, 10_000);
    const admin = connectRedis(url, {});
    opened.push({ close: async () => void admin.disconnect() });
    const raw = async () => Number(await admin.get(`${prefix}{${counter.owner}}counter:${counter.key}`));
    // The killed ingress takes slices and spends 200 of them.
    expect(await burst([killed.allowances], request, { count: 200, wave: 20 })).toBe(200);
    expect(killed.allowances.admissions().local).toBeGreaterThan(0);
    // Killed: it never gives back (its connection closes without a return).
    await killed.store.close();
    const holding = await raw();
    expect(holding).toBeGreaterThan(200);
    // After its lease the survivor's next take reclaims what the killed one had not armed.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await burst([survivor.allowances], request, { count: 10, wave: 10 })).toBe(10);
    await survivor.allowances.close();
    expect(await admin.hlen(`${prefix}{${counter.owner}}slices:${counter.key}`)).toBe(0);
    const after = await raw();
    expect(after).toBeLessThan(holding + 10);
    // What the killed ingress armed and never spent stays counted (it may have admitted it): at most a slice.
    expect(after).toBeGreaterThanOrEqual(210);
    expect(after - 210).toBeLessThanOrEqual(10_000 / 20);
    expect(await survivor.store.readCounters([counter])).toEqual([after]);
  });

  it('gives back a slice when its period ends, and starts the next period from nothing', async () => {
    const prefix = `gw-allow:${randomUUID()}:`;
    const one = await ingress(prefix, { tickMs: 50 });
    const id = owner();
    const periodEnd = Date.now() + 1_000;
    const first = { key: `r:period:${periodEnd - 60_000}`, owner: id };
    await burst([one.allowances], requests(first, 1_000, periodEnd), { count: 100, wave: 10 });
    // Slices were taken past what was spent: once the period ends they go back.
    expect(await rawCounter(prefix, first)).toBeGreaterThan(100);
    await vi.waitFor(async () => expect(await rawCounter(prefix, first)).toBe(100), { timeout: 5_000 });
    const second = { key: `r:period:${periodEnd}`, owner: id };
    await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(periodEnd), { timeout: 5_000 });
    await burst([one.allowances], requests(second, 1_000, periodEnd + 60_000), { count: 10, wave: 10 });
    await one.allowances.close();
    expect(await rawCounter(prefix, second)).toBe(10);
  });

  it('settles overages and give-backs in the slice held: read after its renewal, kept when it goes back, each once', async () => {
    const { prefix, one, counter, check, ids } = await fortyAdmitted('b:settle', { tickMs: 50 });
    expect(one.allowances.admissions().local).toBeGreaterThan(0);
    const settles = vi.spyOn(one.store, 'settleReservation');
    const settle = (id: string, delta: number) =>
      one.allowances.settleReservation({
        id,
        adjustments: [{ ...counter, delta, expireAtMs: check.expireAtMs }],
      });
    // Twenty requests cost 1 more than reserved, then twenty cost 4 less: 400 + 20 - 80.
    for (const id of ids.slice(0, 20)) expect(await settle(id, 1)).toBe(true);
    for (const id of ids.slice(20)) expect(await settle(id, -4)).toBe(true);
    // Overages came out of the slice's armed room while it had some, give-backs lowered what it used: those
    // settles only closed their journal entries.
    const calls = settles.mock.calls.map(([call]) => call.adjustments.length);
    expect(calls.slice(0, 20).filter((count) => count === 0).length).toBeGreaterThan(0);
    expect(calls.slice(20)).toEqual(Array(20).fill(0));
    await expect.poll(() => one.allowances.readCounters([counter])).toEqual([340]);
    // A settle again (retried, or raced by the sweeper) changes nothing.
    expect(await settle(ids[0]!, 1)).toBe(false);
    expect(await settle(ids[39]!, -4)).toBe(false);
    await one.allowances.close();
    expect(await rawCounter(prefix, counter)).toBe(340);
  });

  it('counts a settle whose close answer was lost once, whether it is retried here or in another process', async () => {
    const { prefix, one, counter, check, ids } = await fortyAdmitted('b:lost', { tickMs: 50 });
    const other = await ingress(prefix, { tickMs: 50 });
    const settle = (allowances: AllowanceStore, id: string, delta: number) =>
      allowances.settleReservation({
        id,
        adjustments: [{ ...counter, delta, expireAtMs: check.expireAtMs }],
      });
    // Twice the journal closes the reservation, then the connection loses the answer.
    const real = one.store.settleReservation.bind(one.store);
    const losing = async (call: Parameters<typeof real>[0]) => {
      await real(call);
      throw new Error('Connection is closed.');
    };
    vi.spyOn(one.store, 'settleReservation').mockImplementationOnce(losing).mockImplementationOnce(losing);
    await expect(settle(one.allowances, ids[0]!, 6)).rejects.toThrow('Connection is closed.');
    await expect(settle(one.allowances, ids[1]!, -4)).rejects.toThrow('Connection is closed.');
    // The slices' part was made before the close: the 40 reservations, the overage and the give-back.
    await expect.poll(() => one.allowances.readCounters([counter])).toEqual([402]);
    // The first is retried here, the second by another process (remote admission): each finds it closed
    // (false, as the settle stage expects) and counts nothing again.
    expect(await settle(one.allowances, ids[0]!, 6)).toBe(false);
    expect(await settle(other.allowances, ids[1]!, -4)).toBe(false);
    expect(await settle(one.allowances, ids[0]!, 6)).toBe(false);
    await one.allowances.close();
    await other.allowances.close();
    expect(await rawCounter(prefix, counter)).toBe(402);
  });

  it('answers settles without a Redis call for the slice, and reports their spend with its renewals', async () => {
    const tickMs = 100;
    const { one, counter, check, ids } = await fortyAdmitted('b:renewals', { tickMs });
    const takes = vi.spyOn(one.store, 'takeSlice');
    // Forty settles 5 ms apart (as the answers of a busy ingress end), each costing 1 less.
    const started = performance.now();
    const settling: Array<Promise<boolean>> = [];
    for (const id of ids) {
      settling.push(
        one.allowances.settleReservation({
          id,
          adjustments: [{ ...counter, delta: -1, expireAtMs: check.expireAtMs }],
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    expect(await Promise.all(settling)).toEqual(Array(40).fill(true));
    // Counted once a renewal reported it, within a tick or two.
    await expect.poll(() => one.allowances.readCounters([counter])).toEqual([360]);
    const elapsedMs = performance.now() - started;
    const reports = takes.mock.calls.filter(([call]) => call.want === 0).length;
    // One a tick at most (and one at each end), not one a settle.
    expect(reports).toBeGreaterThan(0);
    expect(reports).toBeLessThanOrEqual(Math.ceil(elapsedMs / tickMs) + 2);
    expect(reports).toBeLessThan(40);
    await one.allowances.close();
  });

  it('stops admitting from slices when a limit is lowered below what was counted', async () => {
    const prefix = `gw-allow:${randomUUID()}:`;
    const one = await ingress(prefix);
    const counter = { key: 'r:lowered', owner: owner() };
    await burst([one.allowances], requests(counter, 1_000), { count: 60, wave: 10 });
    expect(one.allowances.admissions().local).toBeGreaterThan(0);
    // The limit drops to 50: 60 were admitted; nothing more is, from a slice or the counter.
    const lowered = await burst([one.allowances], requests(counter, 50), { count: 20, wave: 10 });
    expect(lowered).toBe(0);
    expect(await rawCounter(prefix, counter)).toBe(60);
    await one.allowances.close();
    expect(await rawCounter(prefix, counter)).toBe(60);
  });
});
