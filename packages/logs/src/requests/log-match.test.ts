// The live tail's filter decides in process what the stores' SQL decides: checked here field by field.
import { describe, expect, it } from 'vitest';
import { logTailParamsSchema, matchesLogFilter } from './log-match.ts';
import { type LogRecord, logRecordSchema } from './log-record.ts';

const record: LogRecord = logRecordSchema.parse({
  id: 'r',
  time: 1_000,
  surface: 'openai',
  route: '/v1/chat/completions',
  provider: 'openai',
  model: 'gpt-4o-mini',
  status: 429,
  error_type: 'request_limit_exceeded',
  latency_ms: 120,
  cost: 0.5,
  virtual_key_id: 'vk-1',
  request_content: 'Hello World',
  routing: {
    rule: { id: 'rule-1', name: 'cheap first', scope: 'global' },
    strategy: 'lowest_cost',
    candidates: [{ provider: 'openai', model: 'gpt-4o-mini', score: 1 }],
    skipped_rules: [{ id: 'rule-0', name: 'eu only', reason: 'error', error: 'no such field' }],
  },
});

const unrouted: LogRecord = { ...record, routing: undefined };

const matches = (query: string) =>
  matchesLogFilter(record, logTailParamsSchema.parse(new URLSearchParams(query)));

describe('matchesLogFilter', () => {
  it.each([
    ['', true],
    ['provider=openai&model=gpt-4o-mini', true],
    ['provider=anthropic', false],
    ['status_class=4xx', true],
    ['status_class=5xx', false],
    ['status=429&error_type=request_limit_exceeded', true],
    ['virtual_key_id=vk-2', false],
    ['from=1000&to=1001', true],
    ['to=1000', false],
    ['min_latency_ms=120&max_latency_ms=120', true],
    ['min_latency_ms=121', false],
    ['max_cost=0.4', false],
    ['q=hello%20world', true],
    ['q=bye', false],
    ['routing_rule=rule-1', true],
    ['routing_rule=cheap%20first', true],
    ['routing_rule=eu%20only', false],
  ])('%s → %s', (query, expected) => {
    expect(matches(query)).toBe(expected);
  });

  it('a record routing decided nothing for matches no routing rule', () => {
    const filter = logTailParamsSchema.parse(new URLSearchParams('routing_rule=rule-1'));
    expect(matchesLogFilter(unrouted, filter)).toBe(false);
    expect(matchesLogFilter(unrouted, logTailParamsSchema.parse(new URLSearchParams()))).toBe(true);
  });

  it('refuses a bad parameter by name', () => {
    const parsed = logTailParamsSchema.safeParse(new URLSearchParams('status_class=9xx'));
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues[0]?.path).toEqual(['status_class']);
  });
});
