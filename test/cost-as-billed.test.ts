// Cost as billed (docs/pricing.md), both modes: an Anthropic answer that read 10,000 prompt tokens from the cache
// and wrote 2,000 to it (500 of them for an hour) is charged each part at its own price (claude-sonnet-4-5's
// built-in list: input $3, cache reads $0.30, cache writes $3.75 for 5 minutes and $6 for an hour, output $15 per
// million), whole and streamed; the key's budget is charged exactly that, and the request's log record holds the
// same cost with a breakdown that sums to it.
import {
  anthropicMessage,
  anthropicStream,
  type FakeUpstream,
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startEmbedded,
  startFakeAnthropic,
  waitFor,
} from '@gw/testkit';
import { startClusterWithLogs } from '@gw/testkit/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, post } from './support/http.ts';

const ADMIN_TOKEN = 'cost-as-billed-admin';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const MODEL = 'claude-sonnet-4-5';
/** Anthropic's usage: input_tokens leaves out the cache reads and writes. */
const USAGE = {
  input_tokens: 100,
  cache_read_input_tokens: 10_000,
  cache_creation_input_tokens: 2_000,
  cache_creation: { ephemeral_5m_input_tokens: 1_500, ephemeral_1h_input_tokens: 500 },
  output_tokens: 500,
};
/** Each part in micro-dollars: tokens × USD per million. */
const EXPECTED_MICROS = {
  input: 100 * 3,
  cached_input: 10_000 * 0.3,
  cache_write: 1_500 * 3.75 + 500 * 6,
  output: 500 * 15,
  reasoning: 0,
};
const TOTAL_MICROS = 300 + 3_000 + 8_625 + 7_500;

interface CostBreakdown {
  input: number;
  cached_input: number;
  cache_write: number;
  output: number;
  reasoning: number;
}

const micros = (usd: number) => Math.round(usd * 1_000_000);

function config(fake: FakeUpstream): GatewayConfigInput {
  return {
    providers: {
      anthropic: {
        keys: [{ value: 'sk-ant-upstream' }],
        network_config: { base_url: fake.url, max_retries: 0 },
      },
    },
  };
}

const MODES = [
  ['embedded', (input: GatewayConfigInput) => startEmbedded({ config: input, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    (input: GatewayConfigInput) => startClusterWithLogs({ config: input, adminToken: ADMIN_TOKEN }),
  ],
] as const;

describe.each(MODES)('cost as billed (%s)', (_mode, start) => {
  let fake: FakeUpstream;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    fake = await startFakeAnthropic();
    gateway = await start(config(fake));
  }, scaled(90_000));
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  const createKey = async () => {
    const created = await post(
      `${gateway.adminUrl}/api/governance/virtual-keys`,
      {
        name: `billed-${Math.random().toString(36).slice(2)}`,
        provider_configs: [{ provider: 'anthropic', allowed_models: ['*'] }],
        budget: { max_limit: 100, reset_duration: '1d' },
      },
      { headers: ADMIN },
    );
    expect(created.status).toBe(201);
    return created.body as { id: string; value: string };
  };
  const spent = async (id: string): Promise<number> =>
    (await get(`${gateway.adminUrl}/api/governance/virtual-keys/${id}/usage`, ADMIN)).body.usage[0].entries[0]
      .used;
  const recordOf = (id: string) =>
    waitFor(
      async () => {
        const answer = await get(`${gateway.adminUrl}/api/logs/${id}`, ADMIN);
        return answer.status === 200 && answer.body.cost > 0 ? answer.body : undefined;
      },
      { timeoutMs: 15_000, what: `the log record of ${id}` },
    );

  it.each([
    ['whole', false],
    ['streamed', true],
  ])(
    'charges a %s answer its cache reads, cache writes, input and output each at its price',
    async (_, stream) => {
      const key = await createKey();
      fake.enqueue(
        stream
          ? { sse: anthropicStream({ model: MODEL, usage: USAGE }) }
          : { json: anthropicMessage({ model: MODEL, usage: USAGE }) },
      );
      const answer = await post(
        `${gateway.url}/v1/chat/completions`,
        {
          model: `anthropic/${MODEL}`,
          messages: [{ role: 'user', content: 'a long cached prefix' }],
          ...(stream && { stream: true, stream_options: { include_usage: true } }),
        },
        { headers: { authorization: `Bearer ${key.value}` } },
      );
      expect(answer.status, JSON.stringify(answer.body)).toBe(200);
      const id = answer.headers.get('x-request-id')!;

      // The record is written once governance's settle answered the cost; the spend shows the admission's
      // reservation until that settle lands, then the cost.
      const record = await recordOf(id);
      expect(micros(record.cost)).toBe(TOTAL_MICROS);
      expect(record).toMatchObject({ input_tokens: 12_100, output_tokens: 500, cached_tokens: 10_000 });
      await waitFor(async () => micros(await spent(key.id)) === TOTAL_MICROS, {
        what: "the key's spend equal to the settled cost",
      });
      const breakdown = record.cost_breakdown as CostBreakdown;
      expect(Object.fromEntries(Object.entries(breakdown).map(([part, usd]) => [part, micros(usd)]))).toEqual(
        EXPECTED_MICROS,
      );
      const summed = breakdown.input + breakdown.cached_input + breakdown.cache_write + breakdown.output;
      expect(micros(summed)).toBe(micros(record.cost));
    },
  );
});
