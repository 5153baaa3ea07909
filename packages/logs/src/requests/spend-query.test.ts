import { describe, expect, it } from 'vitest';
import { monthOf, spendParamsSchema } from './spend-query.ts';

const NOW = Date.UTC(2026, 11, 2, 14, 0);
const params = spendParamsSchema(() => NOW);
const parse = (query: string) => params.safeParse(new URLSearchParams(query));

describe('spendParamsSchema', () => {
  it('defaults the period to the current UTC month and reads ISO dates and epoch ms', () => {
    expect(monthOf(NOW)).toEqual({ from: Date.UTC(2026, 11, 1), to: Date.UTC(2027, 0, 1) });
    expect(parse('group_by=model').data).toEqual({
      query: { group_by: 'model', from: Date.UTC(2026, 11, 1), to: Date.UTC(2027, 0, 1) },
      format: undefined,
    });
    expect(parse('group_by=team&from=2026-01-01&to=2026-02-01T00:00:00Z&team_id=t&format=csv').data).toEqual({
      query: { group_by: 'team', from: Date.UTC(2026, 0, 1), to: Date.UTC(2026, 1, 1), team_id: 't' },
      format: 'csv',
    });
    expect(parse('group_by=team&from=1000&to=2000').data?.query).toMatchObject({ from: 1000, to: 2000 });
  });

  it('names the parameter it refuses', () => {
    const pathOf = (query: string) => parse(query).error?.issues[0]?.path;
    expect(pathOf('group_by=route')).toEqual(['group_by']);
    expect(pathOf('group_by=team&from=yesterday')).toEqual(['from']);
    expect(pathOf('group_by=team&from=2027-02-01')).toEqual(['to']);
    expect(pathOf('group_by=team&team_id=a&team_id=b')).toEqual(['team_id']);
  });
});
