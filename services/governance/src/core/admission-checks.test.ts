// Each admission check pairs a counter with its meaning; a refusal names the limit the store found exhausted.
import { describe, expect, it } from 'vitest';
import { admissionChecks, budgetChecks, rateLimitChecks } from './admission-checks.ts';
import { admissionRefusal } from './refusal-errors.ts';

const now = Date.UTC(2026, 10, 22, 12, 0, 30);
const team = {
  id: 'team_1',
  name: 'search',
  budgets: [{ id: 'bud_1', max_limit: 5, reset_duration: '1d', calendar_aligned: true }],
};
const limits = { request_max_limit: 10, request_reset_duration: '1m' as const, token_max_limit: 1000 };

describe('admission checks', () => {
  const budgets = budgetChecks(team, 'team', { reserve: 0, strict: false, now });
  const rates = rateLimitChecks({ id: 'vk_1', name: 'app', level: 'virtual_key' }, limits, now);

  it('counts a request at admission and tokens at settlement, each in its own window', () => {
    expect(budgets.map(({ check }) => check)).toEqual([
      {
        key: `b:bud_1:${Date.UTC(2026, 10, 22)}`,
        owner: 'team:team_1',
        limit: 5_000_000,
        need: 1,
        amount: 0,
        expireAtMs: Date.UTC(2026, 10, 23),
      },
    ]);
    expect(rates.map(({ check }) => [check.key, check.owner, check.need, check.amount])).toEqual([
      [`r:vk_1:60000:${Date.UTC(2026, 10, 22, 12, 0)}`, 'key:vk_1', 1, 1],
      [`t:vk_1:60000:${Date.UTC(2026, 10, 22, 12, 0)}`, 'key:vk_1', 1, 0],
    ]);
  });

  it.each([
    [
      { group: -1, index: 0 },
      'budget_exceeded',
      402,
      'team',
      "budget of team 'search' is exhausted: $5.000000 used",
    ],
    [
      { group: -1, index: 1 },
      'request_limit_exceeded',
      429,
      'virtual_key',
      "request limit of virtual key 'app'",
    ],
    [{ group: -1, index: 2 }, 'token_limit_exceeded', 429, 'virtual_key', "token limit of virtual key 'app'"],
  ])('turns an exhausted counter %j into %s', (failed, type, status, code, message) => {
    const error = admissionRefusal({
      failed: { ...failed, current: 5_000_000 },
      required: [...budgets, ...rates],
      alternatives: [],
      now,
    });
    expect(error).toMatchObject({ type, status, code });
    expect(error.message).toContain(message);
    expect(error.retryAfter).toBeGreaterThan(0);
  });

  describe('of one authorization', () => {
    const key = {
      id: 'vk_1',
      name: 'app',
      value_hash: 'hash',
      value_hint: 'sk-gw-…0000',
      is_active: true,
      budgets: [],
      rate_limit: { request_max_limit: 10 },
      provider_configs: [],
      created_at: '2026-11-01T00:00:00Z',
      updated_at: '2026-11-01T00:00:00Z',
    };
    const config = (provider: string) => ({
      provider,
      weight: 1,
      allowed_models: ['*'],
      key_ids: ['*'],
      budgets: [{ id: `bud_${provider}`, max_limit: 1, reset_duration: '1M', calendar_aligned: false }],
    });
    const checks = admissionChecks({
      repository: { get: () => undefined },
      key,
      targets: [
        { provider: 'openai', model: 'm', config: config('openai') },
        { provider: 'azure', model: 'm', config: config('azure') },
      ],
      budgets: { reserve: 0, strict: false, now },
    });

    it('requires the key’s limits and offers one group of provider-config checks per target', () => {
      expect(checks.required.map(({ meaning }) => [meaning.kind, meaning.level])).toEqual([
        ['requests', 'virtual_key'],
      ]);
      expect(
        checks.alternatives.map((group) => group.map(({ meaning }) => [meaning.kind, meaning.name])),
      ).toEqual([[['budget', 'app/openai']], [['budget', 'app/azure']]]);
    });

    it('counts a provider config’s counters as its key’s (one step checks the key and its alternatives)', () => {
      const owners = [checks.required, ...checks.alternatives].flat().map(({ check }) => check.owner);
      expect(new Set(owners)).toEqual(new Set([`key:${key.id}`]));
    });

    it('names the provider config whose counter an alternative exhausted', () => {
      const error = admissionRefusal({ failed: { group: 1, index: 0, current: 1_000_000 }, ...checks, now });
      expect(error).toMatchObject({ type: 'budget_exceeded', status: 402, code: 'provider_config' });
      expect(error.message).toContain("provider config 'app/azure'");
    });

    it('never tells the caller a limit was reached when the refusal names no check of the admission', () => {
      const error = admissionRefusal({ failed: { group: 2, index: 0, current: 0 }, ...checks, now });
      expect(error).toMatchObject({ type: 'internal_error', status: 500 });
    });
  });
});
