import { describe, expect, it } from 'vitest';
import { logQueryParamsSchema, logStatsParamsSchema } from '../index.ts';

/** The first issue as the admin API's `validate` would name it. */
function refusal(result: {
  success: boolean;
  error?: { issues: Array<{ path: PropertyKey[]; message: string }> };
}) {
  expect(result.success).toBe(false);
  const issue = result.error!.issues[0]!;
  return `${issue.path.join('.')}: ${issue.message}`;
}

describe('logQueryParamsSchema', () => {
  it('reads every filter, the sort and the page from URL parameters, numbers as numbers', () => {
    const params = new URLSearchParams(
      'from=1000&to=2000&provider=openai&model=gpt-4o&status_class=5xx&status=503&error_type=upstream_error' +
        '&virtual_key_id=vk1&team_id=t1&customer_id=c1&min_latency_ms=1.5&max_latency_ms=2e3&min_cost=0' +
        '&max_cost=.5&q=hello+world&sort=cost&order=asc&limit=10',
    );
    expect(logQueryParamsSchema.parse(params)).toEqual({
      from: 1000,
      to: 2000,
      provider: 'openai',
      model: 'gpt-4o',
      status_class: '5xx',
      status: 503,
      error_type: 'upstream_error',
      virtual_key_id: 'vk1',
      team_id: 't1',
      customer_id: 'c1',
      min_latency_ms: 1.5,
      max_latency_ms: 2000,
      min_cost: 0,
      max_cost: 0.5,
      q: 'hello world',
      sort: 'cost',
      order: 'asc',
      limit: 10,
    });
  });

  it('defaults to the newest 100 and treats an empty parameter as absent', () => {
    expect(logQueryParamsSchema.parse(new URLSearchParams('provider=&q='))).toEqual({
      sort: 'time',
      order: 'desc',
      limit: 100,
    });
  });

  it('accepts the object of strings a framework parses the query into', () => {
    expect(logQueryParamsSchema.parse({ limit: '5', provider: 'openai' })).toMatchObject({
      limit: 5,
      provider: 'openai',
    });
  });

  it('refuses a bad parameter naming it', () => {
    const refused = (query: string) => refusal(logQueryParamsSchema.safeParse(new URLSearchParams(query)));
    expect(refused('limit=0')).toMatch(/^limit: /);
    expect(refused('limit=1001')).toMatch(/^limit: /);
    expect(refused('limit=ten')).toMatch(/^limit: .*number/);
    expect(refused('status_class=6xx')).toMatch(/^status_class: /);
    expect(refused('sort=provider')).toMatch(/^sort: /);
    expect(refused('from=-5')).toMatch(/^from: /);
    expect(refused('from=10&to=5')).toBe('to: must not be below from');
    expect(refused('min_latency_ms=9&max_latency_ms=1')).toBe(
      'max_latency_ms: must not be below min_latency_ms',
    );
    expect(refused('provider=a&provider=b')).toMatch(/^provider: /);
    expect(refused('cursor=abc')).toBe('cursor: is not a cursor this API gave out');
    expect(refused('colour=blue')).toMatch(/colour/);
    expect(refused('__proto__=x')).toMatch(/__proto__/);
  });
});

describe('logStatsParamsSchema', () => {
  it('reads the filter, bucket width and grouping from flat parameters', () => {
    expect(
      logStatsParamsSchema.parse(
        new URLSearchParams('from=0&to=3600000&provider=openai&bucket_ms=60000&group_by=model'),
      ),
    ).toEqual({
      filter: { from: 0, to: 3_600_000, provider: 'openai' },
      bucket_ms: 60_000,
      group_by: 'model',
    });
    expect(logStatsParamsSchema.parse(new URLSearchParams(''))).toEqual({ filter: {}, bucket_ms: 3_600_000 });
  });

  it('refuses a bad parameter naming it, and more buckets than it will compute', () => {
    const refused = (query: string) => refusal(logStatsParamsSchema.safeParse(new URLSearchParams(query)));
    expect(refused('bucket_ms=999')).toMatch(/^bucket_ms: /);
    expect(refused('group_by=customer_id')).toMatch(/^group_by: /);
    expect(refused('from=0&to=100000000&bucket_ms=1000')).toBe(
      'bucket_ms: makes more than 10000 buckets between from and to',
    );
    expect(refused('limit=5')).toMatch(/limit/);
  });
});
