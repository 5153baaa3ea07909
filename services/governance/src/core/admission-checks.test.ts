// Each admission check pairs a counter with its meaning; a refusal names the limit the store found exhausted.
import { describe, expect, it } from 'vitest';
import { budgetChecks, rateLimitChecks } from './admission-checks.ts';
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
        limit: 5_000_000,
        need: 1,
        amount: 0,
        expireAtMs: Date.UTC(2026, 10, 23),
      },
    ]);
    expect(rates.map(({ check }) => [check.key, check.need, check.amount])).toEqual([
      [`r:vk_1:60000:${Date.UTC(2026, 10, 22, 12, 0)}`, 1, 1],
      [`t:vk_1:60000:${Date.UTC(2026, 10, 22, 12, 0)}`, 1, 0],
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
});
