import { expect } from 'vitest';
import { ZodError } from 'zod';
import type { SpendRow } from '../../logs/src/index.ts';
import { type ContractCase, logRecord, T0 } from './log-store-fixtures.ts';

const HOUR = 3_600_000;
const END = T0 + 2 * HOUR;

/**
 * Two hours of charged requests, and one just outside on each side. Costs are prices of real answers (sums a
 * float adds up to a hair off), so the figures below hold only if the store rounds to the micro-dollar.
 */
const SPEND_RECORDS = [
  logRecord({ id: 'before', time: T0 - 1, virtual_key_id: 'vk1', team_id: 't1', cost: 5 }),
  logRecord({
    id: 'p-a',
    time: T0,
    provider: 'openai',
    model: 'gpt-4o',
    virtual_key_id: 'vk1',
    virtual_key_name: 'old name',
    team_id: 't1',
    customer_id: 'c1',
    input_tokens: 100,
    output_tokens: 10,
    cached_tokens: 40,
    cost: 0.000_375,
  }),
  logRecord({
    id: 'p-b',
    time: T0 + HOUR,
    provider: 'openai',
    model: 'gpt-4o-mini',
    virtual_key_id: 'vk1',
    virtual_key_name: 'checkout',
    team_id: 't1',
    customer_id: 'c1',
    input_tokens: 200,
    output_tokens: 20,
    cost: 0.1,
  }),
  logRecord({
    id: 'p-c',
    time: T0 + HOUR + 1,
    provider: 'anthropic',
    model: 'claude',
    virtual_key_id: 'vk2',
    virtual_key_name: 'search',
    team_id: 't2',
    user_id: 'u1',
    input_tokens: 300,
    output_tokens: 30,
    cached_tokens: 100,
    cost: 0.2,
  }),
  // Refused before routing: counted as a request, no model, no provider, no cost.
  logRecord({ id: 'p-d', time: END - 1, status: 429, virtual_key_id: 'vk2', team_id: 't2' }),
  logRecord({ id: 'after', time: END, virtual_key_id: 'vk2', team_id: 't2', cost: 7 }),
];

const row = (group: string | null, figures: Omit<SpendRow, 'group'>): SpendRow => ({ group, ...figures });

/** Spend cases of the LogStore contract: groups, period bounds, filters, totals, refusals. */
export function runLogSpendContract(contractCase: ContractCase): void {
  contractCase(
    'spend by virtual key: one row per key over [from, to), named as its latest named record, highest cost first',
    async (store) => {
      await store.insert(SPEND_RECORDS);
      const report = await store.spend({ group_by: 'virtual_key', from: T0, to: END });
      expect(report).toEqual({
        group_by: 'virtual_key',
        from: T0,
        to: END,
        rows: [
          row('vk2', {
            name: 'search',
            requests: 2,
            input_tokens: 300,
            output_tokens: 30,
            cached_tokens: 100,
            cost: 0.2,
          }),
          row('vk1', {
            name: 'checkout',
            requests: 2,
            input_tokens: 300,
            output_tokens: 30,
            cached_tokens: 40,
            cost: 0.100_375,
          }),
        ],
        total: { requests: 4, input_tokens: 600, output_tokens: 60, cached_tokens: 140, cost: 0.300_375 },
      });
    },
  );

  contractCase(
    'spend by model, provider, team, customer and user; records without one in the null row',
    async (store) => {
      await store.insert(SPEND_RECORDS);
      const keysAndCosts = async (group_by: 'model' | 'provider' | 'team' | 'customer' | 'user') =>
        (await store.spend({ group_by, from: T0, to: END })).rows.map(({ group, requests, cost, name }) => [
          group,
          requests,
          cost,
          name,
        ]);
      expect(await keysAndCosts('model')).toEqual([
        ['claude', 1, 0.2, undefined],
        ['gpt-4o-mini', 1, 0.1, undefined],
        ['gpt-4o', 1, 0.000_375, undefined],
        [null, 1, 0, undefined],
      ]);
      expect(await keysAndCosts('provider')).toEqual([
        ['anthropic', 1, 0.2, undefined],
        ['openai', 2, 0.100_375, undefined],
        [null, 1, 0, undefined],
      ]);
      expect(await keysAndCosts('team')).toEqual([
        ['t2', 2, 0.2, undefined],
        ['t1', 2, 0.100_375, undefined],
      ]);
      expect(await keysAndCosts('customer')).toEqual([
        [null, 2, 0.2, undefined],
        ['c1', 2, 0.100_375, undefined],
      ]);
      expect(await keysAndCosts('user')).toEqual([
        ['u1', 1, 0.2, undefined],
        [null, 3, 0.100_375, undefined],
      ]);
    },
  );

  contractCase(
    'spend covers the filter’s key, team or customer only, and an empty period is no rows',
    async (store) => {
      await store.insert(SPEND_RECORDS);
      const period = { from: T0, to: END };
      const ofTeam = await store.spend({ group_by: 'model', team_id: 't1', ...period });
      expect(ofTeam.rows.map(({ group }) => group)).toEqual(['gpt-4o-mini', 'gpt-4o']);
      expect(ofTeam.total).toEqual({
        requests: 2,
        input_tokens: 300,
        output_tokens: 30,
        cached_tokens: 40,
        cost: 0.100_375,
      });
      const ofKey = await store.spend({ group_by: 'provider', virtual_key_id: 'vk2', ...period });
      expect(ofKey.rows.map(({ group, requests }) => [group, requests])).toEqual([
        ['anthropic', 1],
        [null, 1],
      ]);
      const ofCustomer = await store.spend({ group_by: 'virtual_key', customer_id: 'c1', ...period });
      expect(ofCustomer.rows.map(({ group }) => group)).toEqual(['vk1']);
      const wider = await store.spend({ group_by: 'team', from: T0 - 1, to: END + 1 });
      expect(wider.total).toMatchObject({ requests: 6, cost: 12.300_375 });
      const empty = await store.spend({ group_by: 'team', from: END + 1, to: END + HOUR });
      expect(empty.rows).toEqual([]);
      expect(empty.total).toEqual({
        requests: 0,
        input_tokens: 0,
        output_tokens: 0,
        cached_tokens: 0,
        cost: 0,
      });
    },
  );

  contractCase(
    'spend refuses a period that ends before it starts, or an unknown group, naming it',
    async (store) => {
      const backwards = await store
        .spend({ group_by: 'team', from: END, to: T0 })
        .catch((error: unknown) => error);
      expect(backwards).toBeInstanceOf(ZodError);
      expect((backwards as ZodError).issues[0]?.path).toEqual(['to']);
      const unknown = await store
        .spend({ group_by: 'route' as 'team', from: T0, to: END })
        .catch((error: unknown) => error);
      expect((unknown as ZodError).issues[0]?.path).toEqual(['group_by']);
    },
  );
}
