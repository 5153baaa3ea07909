import type { RoutingDecision } from '@gw/shared';
import type { LogQueryInput, LogRecord, LogRecordInput, LogStore } from '../../logs/src/index.ts';
import { logRecordSchema, MAX_NAME, ROUTING_LIMITS } from '../../logs/src/index.ts';

/** 2024-01-01T00:00:00Z: a whole hour, so minute and hour buckets start on it. */
export const T0 = Date.UTC(2024, 0, 1);
const SECOND = 1_000;

/** A valid record: a successful chat request, with the given fields on top. */
export function logRecord(fields: Partial<LogRecordInput> & { id: string }): LogRecord {
  return logRecordSchema.parse({
    time: T0,
    surface: 'openai',
    route: '/v1/chat/completions',
    status: 200,
    latency_ms: 100,
    ...fields,
  });
}

/** A rule's decision as the router explains it: a score for each candidate, one skipped, a rule that failed. */
export function routingDecision(rule = { id: 'rule-cheap', name: 'cheap first' }): RoutingDecision {
  return {
    rule: { ...rule, scope: 'team' },
    strategy: 'lowest_cost',
    candidates: [
      { provider: 'bedrock', model: 'anthropic.claude-3-5-sonnet', score: 0.875, state: 'healthy' },
      { provider: 'openai', model: 'gpt-4o', score: -1.5e-7, state: 'degraded' },
      {
        provider: 'anthropic',
        model: 'claude-sonnet-4-5',
        skipped: 'context_window',
        detail: 'needs 250000 tokens, "window" 200000 é',
      },
    ],
    skipped_rules: [
      { id: 'rule-eu', name: 'eu only', reason: 'error', error: "no such field 'region' 🚀" },
      { id: 'rule-vip', name: 'vip', reason: 'boundary' },
    ],
  };
}

/**
 * The largest decision a record keeps (ROUTING_LIMITS), every text at its bound; `over` goes past each bound by
 * that much, for the writer to cut (what it keeps is then the decision of `over` 0).
 */
export function largestRoutingDecision(over = 0): RoutingDecision {
  const text = (seed: string, length: number) => seed.repeat(length).slice(0, length);
  return {
    rule: { id: text('i', MAX_NAME + over), name: text('ñ', MAX_NAME + over), scope: 'virtual_key' },
    strategy: 'weighted',
    candidates: Array.from({ length: ROUTING_LIMITS.candidates + over }, (_, index) => ({
      provider: text(`p${index}`, MAX_NAME + over),
      model: text(`m${index}`, MAX_NAME + over),
      score: index / 7,
      state: text('s', MAX_NAME + over),
      skipped: 'limits' as const,
      detail: text(`d${index} é`, ROUTING_LIMITS.text + over),
    })),
    skipped_rules: Array.from({ length: ROUTING_LIMITS.skippedRules + over }, (_, index) => ({
      id: text(`r${index}`, MAX_NAME + over),
      name: text(`n${index}`, MAX_NAME + over),
      reason: 'error' as const,
      error: text(`e${index} "`, ROUTING_LIMITS.text + over),
    })),
  };
}

/** A record with every field set, to check that each one round-trips. */
export function fullLogRecord(id: string): LogRecord {
  return logRecordSchema.parse({
    id,
    time: T0 + 123,
    surface: 'anthropic',
    route: '/anthropic/v1/messages',
    provider: 'bedrock',
    model: 'anthropic.claude-3-5-sonnet',
    requested_model: 'claude-fast',
    status: 200,
    error_type: 'upstream_error',
    error_message: 'upstream answered 503: "overloaded" é',
    upstream_status: 503,
    upstream_body: '{"error":{"message":"overloaded é"}}',
    latency_ms: 1234.5,
    time_to_first_token_ms: 87.25,
    input_tokens: 1_000_000,
    output_tokens: 2_048,
    cached_tokens: 512,
    reasoning_tokens: 1_024,
    cost: 0.012345,
    cost_breakdown: {
      input: 0.003,
      cached_input: 0.000045,
      cache_write: 0.0003,
      output: 0.009,
      reasoning: 0.0045,
    },
    virtual_key_id: 'vk-1',
    virtual_key_name: 'Production key',
    team_id: 'team-1',
    customer_id: 'customer-1',
    user_id: 'user-1',
    business_unit_id: 'unit-1',
    selected_key_id: 'bedrock-key-2',
    attempts: [
      {
        provider: 'openai',
        model: 'gpt-4o',
        status: 503,
        error_type: 'upstream_error',
        message: 'overloaded "é"',
      },
    ],
    fallback_index: 1,
    routing: routingDecision(),
    cache_outcome: 'miss',
    guardrail_outcome: 'redacted',
    request_content: '{"messages":[{"role":"user","content":"quotes \\" é 🚀 \\n"}]}',
    response_content: 'line one\nline two\ttabbed, unicode é 🚀, a NUL-free text',
    content_truncated: true,
    trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
  });
}

/** Eight records whose every filter field differs enough for each filter to pick a known set. */
export const FILTER_RECORDS: LogRecord[] = [
  logRecord({
    id: 'a',
    time: T0,
    provider: 'openai',
    model: 'gpt-4o',
    virtual_key_id: 'vk1',
    virtual_key_name: 'key one',
    team_id: 't1',
    customer_id: 'c1',
    cache_outcome: 'hit',
    latency_ms: 100,
    cost: 0.01,
    request_content: 'hello world',
    response_content: 'Hi there',
    routing: routingDecision(),
  }),
  logRecord({
    id: 'b',
    time: T0 + 10 * SECOND,
    provider: 'openai',
    model: 'gpt-4o-mini',
    virtual_key_id: 'vk2',
    team_id: 't1',
    customer_id: 'c2',
    cache_outcome: 'miss',
    guardrail_outcome: 'redacted',
    latency_ms: 250,
    cost: 0.002,
    routing: routingDecision({ id: 'rule-eu', name: 'eu only' }),
  }),
  logRecord({
    id: 'c',
    time: T0 + 20 * SECOND,
    provider: 'anthropic',
    model: 'claude-3',
    status: 429,
    error_type: 'request_limit_exceeded',
    virtual_key_id: 'vk1',
    virtual_key_name: 'key one',
    team_id: 't2',
    customer_id: 'c1',
    guardrail_outcome: 'blocked',
    latency_ms: 5,
  }),
  logRecord({
    id: 'd',
    time: T0 + 30 * SECOND,
    provider: 'anthropic',
    model: 'claude-3',
    status: 502,
    error_type: 'upstream_error',
    virtual_key_id: 'vk3',
    latency_ms: 1200,
    routing: { ...routingDecision(), rule: null },
  }),
  logRecord({
    id: 'e',
    time: T0 + 40 * SECOND,
    provider: 'gemini',
    model: 'gemini-2',
    customer_id: 'c3',
    latency_ms: 800,
    cost: 0.05,
    response_content: 'HELLO from Gemini',
  }),
  logRecord({
    id: 'f',
    time: T0 + 50 * SECOND,
    provider: 'openai',
    model: 'gpt-4o',
    status: 400,
    error_type: 'invalid_request',
    virtual_key_id: 'vk2',
    team_id: 't2',
    customer_id: 'c2',
    latency_ms: 12,
  }),
  logRecord({
    id: 'g',
    time: T0 + 60 * SECOND,
    status: 401,
    error_type: 'virtual_key_invalid',
    latency_ms: 1,
  }),
  logRecord({
    id: 'h',
    time: T0 + 70 * SECOND,
    provider: 'openai',
    model: 'gpt-4o',
    status: 503,
    error_type: 'all_targets_failed',
    virtual_key_id: 'vk1',
    virtual_key_name: 'key one',
    team_id: 't1',
    customer_id: 'c1',
    latency_ms: 3000,
    cost: 0.1,
    routing: routingDecision(),
  }),
];

/** Each filter alone, then a few together, with the ids of FILTER_RECORDS it must answer. */
export const FILTER_CASES: Array<[filter: LogQueryInput, ids: string]> = [
  [{}, 'abcdefgh'],
  [{ from: T0 + 30 * SECOND }, 'defgh'],
  [{ to: T0 + 30 * SECOND }, 'abc'],
  [{ from: T0 + 10 * SECOND, to: T0 + 50 * SECOND }, 'bcde'],
  [{ provider: 'openai' }, 'abfh'],
  [{ model: 'gpt-4o' }, 'afh'],
  [{ status_class: '2xx' }, 'abe'],
  [{ status_class: '4xx' }, 'cfg'],
  [{ status_class: '5xx' }, 'dh'],
  [{ status_class: '3xx' }, ''],
  [{ status: 429 }, 'c'],
  [{ error_type: 'upstream_error' }, 'd'],
  [{ virtual_key_id: 'vk1' }, 'ach'],
  [{ virtual_key_name: 'key one' }, 'ach'],
  [{ cache_outcome: 'hit' }, 'a'],
  [{ guardrail_outcome: 'blocked' }, 'c'],
  [{ team_id: 't1' }, 'abh'],
  [{ customer_id: 'c2' }, 'bf'],
  [{ min_latency_ms: 250 }, 'bdeh'],
  [{ max_latency_ms: 100 }, 'acfg'],
  [{ min_latency_ms: 12, max_latency_ms: 800 }, 'abef'],
  [{ min_cost: 0.01 }, 'aeh'],
  [{ max_cost: 0.002 }, 'bcdfg'],
  [{ q: 'hello' }, 'ae'],
  [{ provider: 'openai', status_class: '5xx' }, 'h'],
  [{ virtual_key_id: 'vk1', min_latency_ms: 100, to: T0 + 60 * SECOND }, 'a'],
  [{ provider: 'openai', team_id: 't1', max_cost: 0.01, status: 200 }, 'ab'],
  [{ q: 'HELLO', provider: 'gemini', min_cost: 0.05 }, 'e'],
  [{ routing_rule: 'rule-cheap' }, 'ah'],
  [{ routing_rule: 'cheap first' }, 'ah'],
  [{ routing_rule: 'eu only', provider: 'openai' }, 'b'],
  // A rule skipped on the way is not the rule that routed the request.
  [{ routing_rule: 'rule-vip' }, ''],
  [{ provider: 'nobody' }, ''],
];

/** Records for the text search: wildcards that must be literal, short texts, content in one field only. */
export const TEXT_RECORDS: LogRecord[] = [
  logRecord({
    id: 's1',
    request_content: 'Tell me about the Eiffel Tower',
    response_content: 'It is in Paris',
  }),
  logRecord({ id: 's2', request_content: 'What is 100% of 5_000?', response_content: '5000' }),
  logRecord({ id: 's3', response_content: '東京タワー and x5000y' }),
  logRecord({ id: 's4', request_content: 'plain' }),
  logRecord({ id: 's5', provider: 'anthropic', response_content: 'the eiffel tower again' }),
];

export const TEXT_CASES: Array<[query: LogQueryInput, ids: string[]]> = [
  [{ q: 'eiffel tower' }, ['s1', 's5']],
  [{ q: 'PARIS' }, ['s1']],
  [{ q: '100%' }, ['s2']],
  [{ q: '5_0' }, ['s2']],
  [{ q: '%' }, ['s2']],
  [{ q: '_' }, ['s2']],
  [{ q: '東京' }, ['s3']],
  [{ q: 'PL' }, ['s4']],
  [{ q: '5000' }, ['s2', 's3']],
  [{ q: 'eiffel', provider: 'anthropic' }, ['s5']],
  [{ q: 'not anywhere' }, []],
];

/** One case of the log store contracts, run against a fresh store of the implementation under test. */
export type ContractCase = (name: string, body: (store: LogStore) => Promise<void>) => void;
