import { expect } from 'vitest';
import { ZodError } from 'zod';
import type { LogStatsBucket } from '../../logs/src/index.ts';
import { type ContractCase, logRecord, T0 } from './log-store-fixtures.ts';

const MINUTE = 60_000;

/** Two minutes of records whose figures are worked out by hand below. */
const STATS_RECORDS = [
  logRecord({
    id: 's-a',
    time: T0,
    provider: 'openai',
    model: 'gpt-4o',
    virtual_key_id: 'vk1',
    latency_ms: 10,
    input_tokens: 100,
    output_tokens: 10,
    cost: 0.1,
  }),
  logRecord({
    id: 's-b',
    time: T0 + 1,
    provider: 'openai',
    model: 'gpt-4o',
    virtual_key_id: 'vk1',
    latency_ms: 20,
    input_tokens: 200,
    output_tokens: 20,
    cost: 0.2,
  }),
  logRecord({
    id: 's-c',
    time: T0 + 2,
    provider: 'openai',
    model: 'gpt-4o-mini',
    virtual_key_id: 'vk2',
    status: 500,
    latency_ms: 30,
    input_tokens: 300,
    output_tokens: 30,
    cost: 0.3,
  }),
  logRecord({
    id: 's-d',
    time: T0 + MINUTE - 1,
    provider: 'openai',
    model: 'gpt-4o-mini',
    latency_ms: 40,
    input_tokens: 400,
    output_tokens: 40,
    cost: 0.4,
  }),
  logRecord({
    id: 's-e',
    time: T0 + MINUTE,
    provider: 'anthropic',
    model: 'claude',
    virtual_key_id: 'vk1',
    status: 429,
    latency_ms: 100,
    input_tokens: 1000,
  }),
  logRecord({
    id: 's-f',
    time: T0 + MINUTE + 5,
    provider: 'openai',
    model: 'gpt-4o',
    virtual_key_id: 'vk2',
    latency_ms: 50,
    input_tokens: 10,
    output_tokens: 5,
    cost: 0.05,
  }),
];

type Figures = [
  count: number,
  errors: number,
  p50: number,
  p95: number,
  p99: number,
  tokensIn: number,
  tokensOut: number,
  cost: number,
];

function bucket(start: number, group: string | null, figures: Figures): LogStatsBucket {
  const [count, errors, p50, p95, p99, input_tokens, output_tokens, cost] = figures;
  return {
    start,
    group,
    count,
    errors,
    error_rate: errors / count,
    latency_p50_ms: p50,
    latency_p95_ms: p95,
    latency_p99_ms: p99,
    input_tokens,
    output_tokens,
    cost,
  };
}

/** Float figures compared to 9 decimals: sums and interpolations differ in the last bits between engines. */
function rounded(buckets: LogStatsBucket[]): LogStatsBucket[] {
  const round = (value: number) => Math.round(value * 1e9) / 1e9;
  return buckets.map((entry) => ({
    ...entry,
    error_rate: round(entry.error_rate),
    latency_p50_ms: round(entry.latency_p50_ms),
    latency_p95_ms: round(entry.latency_p95_ms),
    latency_p99_ms: round(entry.latency_p99_ms),
    cost: round(entry.cost),
  }));
}

/** Stats cases of the LogStore contract: buckets, groups, percentiles (linear interpolation), filters. */
export function runLogStatsContract(contractCase: ContractCase): void {
  contractCase('stats count, error rate, percentiles, tokens and cost per time bucket', async (store) => {
    await store.insert(STATS_RECORDS);
    const stats = await store.stats({ bucket_ms: MINUTE });
    expect(stats.bucket_ms).toBe(MINUTE);
    expect(stats.group_by).toBeNull();
    expect(rounded(stats.buckets)).toEqual([
      bucket(T0, null, [4, 1, 25, 38.5, 39.7, 1000, 100, 1]),
      bucket(T0 + MINUTE, null, [2, 1, 75, 97.5, 99.5, 1010, 5, 0.05]),
    ]);
  });

  contractCase(
    'stats grouped by provider, model or virtual key, records without one in the null group',
    async (store) => {
      await store.insert(STATS_RECORDS);
      const byProvider = await store.stats({ bucket_ms: MINUTE, group_by: 'provider' });
      expect(byProvider.group_by).toBe('provider');
      expect(rounded(byProvider.buckets)).toEqual([
        bucket(T0, 'openai', [4, 1, 25, 38.5, 39.7, 1000, 100, 1]),
        bucket(T0 + MINUTE, 'anthropic', [1, 1, 100, 100, 100, 1000, 0, 0]),
        bucket(T0 + MINUTE, 'openai', [1, 0, 50, 50, 50, 10, 5, 0.05]),
      ]);
      const byKey = await store.stats({ bucket_ms: MINUTE, group_by: 'virtual_key_id' });
      expect(rounded(byKey.buckets)).toEqual([
        bucket(T0, null, [1, 0, 40, 40, 40, 400, 40, 0.4]),
        bucket(T0, 'vk1', [2, 0, 15, 19.5, 19.9, 300, 30, 0.3]),
        bucket(T0, 'vk2', [1, 1, 30, 30, 30, 300, 30, 0.3]),
        bucket(T0 + MINUTE, 'vk1', [1, 1, 100, 100, 100, 1000, 0, 0]),
        bucket(T0 + MINUTE, 'vk2', [1, 0, 50, 50, 50, 10, 5, 0.05]),
      ]);
      const byModel = await store.stats({ bucket_ms: MINUTE, group_by: 'model' });
      expect(byModel.buckets.map(({ start, group, count }) => [start - T0, group, count])).toEqual([
        [0, 'gpt-4o', 2],
        [0, 'gpt-4o-mini', 2],
        [MINUTE, 'claude', 1],
        [MINUTE, 'gpt-4o', 1],
      ]);
    },
  );

  contractCase('stats cover only the records the filter selects', async (store) => {
    await store.insert(STATS_RECORDS);
    const stats = await store.stats({
      filter: { provider: 'openai', status_class: '2xx', from: T0, to: T0 + 2 * MINUTE },
      bucket_ms: 2 * MINUTE,
    });
    expect(rounded(stats.buckets)).toEqual([bucket(T0, null, [4, 0, 30, 48.5, 49.7, 710, 75, 0.75])]);
    expect((await store.stats({ filter: { provider: 'nobody' } })).buckets).toEqual([]);
    const refused = await store.stats({ bucket_ms: 10 }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(ZodError);
    const tooMany = await store
      .stats({ filter: { from: 0, to: T0 }, bucket_ms: 1_000 })
      .catch((error: unknown) => error);
    expect((tooMany as ZodError).issues[0]?.path).toEqual(['bucket_ms']);
  });
}
