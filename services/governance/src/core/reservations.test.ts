// Reservations of admissions whose answer was lost (a Redis command that timed out, then ran): released once
// the store answers again, so they stop holding the key's limits. Admission runs on its own here, as in a
// cluster's ingress (`startAdmission`), beside a governance core on the same store that manages the key.
import { LiveSettings, parseGatewayConfig, serviceUnavailable, silentLogger } from '@gw/shared';
import { MemoryStore, type Store } from '@gw/shared/store';
import { afterAll, expect, it, vi } from 'vitest';
import { startAdmission } from '../compose.ts';
import { liveGovernance } from '../testing/live-governance.ts';
import { GovernanceCore } from './governance-core.ts';

const closing: Array<{ close(): Promise<void> | void }> = [];
afterAll(async () => {
  for (const resource of closing.reverse()) await resource.close();
});

/** The store, with admissions (and settles) that run but whose answer is lost while `lost.now` (`lost.settle`) holds. */
function losingAnswers(store: Store) {
  const lost = { now: false, settle: false };
  const flaky = new Proxy(store, {
    get(target, name) {
      if (name === 'admit')
        return async (...request: Parameters<Store['admit']>) => {
          const result = await target.admit(...request);
          if (lost.now) throw serviceUnavailable('redis: command timed out');
          return result;
        };
      if (name === 'settleReservation')
        return async (...request: Parameters<Store['settleReservation']>) => {
          const result = await target.settleReservation(...request);
          if (lost.settle) throw serviceUnavailable('redis: command timed out');
          return result;
        };
      const value = Reflect.get(target, name);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { flaky, lost };
}

/** A governance core managing a key with a $1 budget, and an admission (as a cluster's ingress runs it) on a store that can lose answers. */
async function admissionLosingAnswers() {
  const store = await MemoryStore.open();
  closing.push(store);
  const config = parseGatewayConfig({
    governance: {
      pricing: { 'gpt-test': { input: 1, output: 1 } },
      settings: { sweep_interval_ms: 0 },
    },
  });
  const governance = await GovernanceCore.start({
    store,
    logger: silentLogger(),
    ...liveGovernance(config),
  });
  closing.push(governance);
  const key = (await governance.manage({
    action: 'create',
    collection: 'virtual-keys',
    body: {
      name: 'limited',
      provider_configs: [{ provider: 'openai', allowed_models: ['*'] }],
      budget: { max_limit: 1, reset_duration: '1d' },
    },
  })) as { id: string; value: string };
  const { flaky, lost } = losingAnswers(store);
  const admission = await startAdmission({
    config,
    settings: LiveSettings.of(config),
    store: flaky,
    logger: silentLogger(),
  });
  closing.push(admission);
  /** What the key's budget holds, in micro-USD (a token costs one here). */
  const budgetUsed = async () => {
    const usage = await governance.manage({ action: 'usage', collection: 'virtual-keys', id: key.id });
    const budget = usage.usage[0]!.entries.find((entry) => entry.kind === 'budget');
    return Math.round((budget?.used ?? Number.NaN) * 1_000_000);
  };
  const authorize = (requestId: string) =>
    admission.authorize({
      requestId,
      kind: 'llm',
      virtualKey: key.value,
      headerNames: [],
      targets: [{ provider: 'openai', model: 'gpt-test' }],
      estimate: { promptTokens: 10 },
    });
  return { store, flaky, lost, admission, budgetUsed, authorize };
}

it('releases the reservation of an admission whose answer was lost, once the store answers', async () => {
  const { store, lost, budgetUsed, authorize } = await admissionLosingAnswers();
  lost.now = true;
  await expect(authorize('lost')).rejects.toMatchObject({ type: 'service_unavailable' });
  // The admission ran: its reservation holds the prompt and the expected completion.
  expect(await store.readReservation('res_lost')).toBeDefined();
  expect(await budgetUsed()).toBe(10 + 256);

  lost.now = false;
  await vi.waitFor(async () => expect(await store.readReservation('res_lost')).toBeUndefined(), {
    timeout: 5_000,
  });
  expect(await budgetUsed()).toBe(0);
});

it('retries a settle whose answer was lost with the plan admission stored, not a read of what that try closed', async () => {
  const { flaky, lost, admission, budgetUsed, authorize } = await admissionLosingAnswers();
  const authorized = await authorize('settled');
  expect(await budgetUsed()).toBe(10 + 256);
  const settles = vi.spyOn(flaky, 'settleReservation');
  const request = {
    requestId: 'settled',
    settlement: authorized.settlement!,
    provider: 'openai',
    model: 'gpt-test',
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
  lost.settle = true;
  await expect(admission.settle(request)).rejects.toMatchObject({ type: 'service_unavailable' });
  // The store closed it and charged what was used; the answer was lost.
  expect(await budgetUsed()).toBe(15);
  lost.settle = false;
  // The retry hands the store the same adjustments (an allowance store owes it the slices' part: a read would
  // have found the reservation closed and settled nothing), which the store applies once.
  await expect(admission.settle(request)).rejects.toMatchObject({ type: 'not_found' });
  expect(settles).toHaveBeenCalledTimes(2);
  expect(settles.mock.calls[1]).toEqual(settles.mock.calls[0]);
  expect(await budgetUsed()).toBe(15);
});
