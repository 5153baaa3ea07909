// Spend reports (docs/governance.md "Spend"), both modes: governed requests through two keys, then
// /api/spend?group_by=virtual_key answers each key's budget usage to the micro-dollar, the CSV has a header row
// and a row per key, bad parameters are 400s naming the parameter, and a Developer sees its team's keys only.
import {
  type FakeOpenAi,
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startEmbedded,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { startClusterWithLogs } from '@gw/testkit/postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, post } from './support/http.ts';

const ADMIN_TOKEN = 'admin-token-for-spend';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const KEY_A = 'sk-gw-spendA000000000000000000000000000000000000';
const KEY_B = 'sk-gw-spendB000000000000000000000000000000000000';
// USD per million tokens; prices that do not add up exactly in floating point.
const PRICES = { 'gpt-4o-mini': { input: 0.15, output: 0.6 }, 'gpt-4o': { input: 2.5, output: 10 } };

const config: GatewayConfigInput = {
  providers: {
    openai: { keys: [{ id: 'key-a', value: 'sk-upstream-spend' }], network_config: { max_retries: 0 } },
  },
  governance: {
    virtual_keys: [
      {
        id: 'vk-a',
        name: 'key, "quoted"',
        value: KEY_A,
        team_id: 'team-a',
        provider_configs: [{ provider: 'openai', allowed_models: ['*'] }],
        budgets: [{ max_limit: 100, reset_duration: '30d' }],
      },
      {
        id: 'vk-b',
        name: 'key-b',
        value: KEY_B,
        team_id: 'team-b',
        provider_configs: [{ provider: 'openai', allowed_models: ['*'] }],
        budgets: [{ max_limit: 100, reset_duration: '30d' }],
      },
    ],
    teams: [
      { id: 'team-a', name: 'team a' },
      { id: 'team-b', name: 'team b' },
    ],
    pricing: PRICES,
  },
  client: { allow_anonymous_admin: false },
} as GatewayConfigInput;

const withUpstream = (fake: FakeOpenAi): GatewayConfigInput => ({
  ...config,
  providers: {
    openai: {
      keys: [{ id: 'key-a', value: 'sk-upstream-spend' }],
      network_config: { base_url: fake.url, max_retries: 0 },
    },
  },
});

const modes = [
  ['embedded', (input: GatewayConfigInput) => startEmbedded({ config: input, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    (input: GatewayConfigInput) => startClusterWithLogs({ config: input, adminToken: ADMIN_TOKEN }),
  ],
] as const;

describe.each(modes)('spend (%s)', (_mode, start) => {
  let fake: FakeOpenAi;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    gateway = await start(withUpstream(fake));
  }, scaled(60_000));
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  const chat = (key: string, model: string) =>
    post(
      `${gateway.url}/v1/chat/completions`,
      { model: `openai/${model}`, messages: [{ role: 'user', content: 'what does it cost' }] },
      { headers: { authorization: `Bearer ${key}` } },
    );
  const spend = (query: string, headers: Record<string, string> = ADMIN) =>
    get(`${gateway.adminUrl}/api/spend?${query}`, headers);
  const budgetUsed = async (id: string): Promise<number> => {
    const usage = await get(`${gateway.adminUrl}/api/governance/virtual-keys/${id}/usage`, ADMIN);
    expect(usage.status).toBe(200);
    return usage.body.usage[0].entries.find((entry: { kind: string }) => entry.kind === 'budget').used;
  };

  it("answers each key's spend equal to its budget's use, to the micro-dollar", async () => {
    const sent = [
      [KEY_A, 'gpt-4o-mini'],
      [KEY_A, 'gpt-4o'],
      [KEY_A, 'gpt-4o-mini'],
      [KEY_B, 'gpt-4o'],
      [KEY_B, 'gpt-4o-mini'],
    ] as const;
    for (const [key, model] of sent) expect((await chat(key, model)).status).toBe(200);
    // Both keys' records are stored once /api/spend counts all five requests.
    const report = await waitFor(
      async () => {
        const answer = await spend('group_by=virtual_key');
        return answer.body.total?.requests === sent.length ? answer.body : undefined;
      },
      { timeoutMs: 15_000, what: 'spend over the five requests' },
    );
    const byKey = Object.fromEntries(report.rows.map((row: { group: string }) => [row.group, row]));
    // A budget's use counts a settle within about a second, when the slice that admitted it is renewed
    // (docs/governance.md "What the reports show"): read until both match what the records hold, or fail.
    const used = await waitFor(
      async () => {
        const now = { 'vk-a': await budgetUsed('vk-a'), 'vk-b': await budgetUsed('vk-b') };
        return now['vk-a'] === byKey['vk-a']?.cost && now['vk-b'] === byKey['vk-b']?.cost ? now : undefined;
      },
      { timeoutMs: 15_000, what: "both budgets' use equal to their keys' spend" },
    );
    expect(used['vk-a']).toBeGreaterThan(0);
    expect(byKey['vk-a']).toMatchObject({ name: 'key, "quoted"', requests: 3, cost: used['vk-a'] });
    expect(byKey['vk-b']).toMatchObject({ name: 'key-b', requests: 2, cost: used['vk-b'] });
    expect(report.total.cost).toBe(Math.round((used['vk-a'] + used['vk-b']) * 1e6) / 1e6);
    expect(report.total.input_tokens).toBe(
      report.rows.reduce((sum: number, row: { input_tokens: number }) => sum + row.input_tokens, 0),
    );
    // The default period is the current UTC month.
    const now = new Date();
    expect(report.from).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
    expect(report.to).toBe(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));

    const byModel = await spend(`group_by=model&team_id=team-a&from=${new Date(report.from).toISOString()}`);
    expect(byModel.status).toBe(200);
    expect(
      byModel.body.rows.map((row: { group: string; requests: number }) => [row.group, row.requests]).sort(),
    ).toEqual([
      ['gpt-4o', 1],
      ['gpt-4o-mini', 2],
    ]);
    expect(byModel.body.total.cost).toBe(used['vk-a']);
    const byTeam = await spend('group_by=team');
    expect(
      byTeam.body.rows.map((row: { group: string; name: string }) => [row.group, row.name]).sort(),
    ).toEqual([
      ['team-a', 'team a'],
      ['team-b', 'team b'],
    ]);
  });

  it('answers CSV for Accept: text/csv and for format=csv, a header row and quoted names', async () => {
    for (const [query, headers] of [
      ['group_by=virtual_key', { ...ADMIN, accept: 'text/csv' }],
      ['group_by=virtual_key&format=csv', ADMIN],
    ] as const) {
      const response = await fetch(`${gateway.adminUrl}/api/spend?${query}`, { headers });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/csv/);
      const lines = (await response.text()).trimEnd().split('\r\n');
      expect(lines[0]).toBe('virtual_key,name,requests,input_tokens,output_tokens,cached_tokens,cost');
      const usedA = await budgetUsed('vk-a');
      const lineA = lines.find((line) => line.startsWith('vk-a,'));
      expect(lineA).toMatch(/^vk-a,"key, ""quoted""",3,\d+,\d+,\d+,/);
      expect(lineA?.endsWith(`,${usedA.toFixed(6)}`)).toBe(true);
      expect(lines.filter((line) => line.startsWith('vk-b,key-b,2,'))).toHaveLength(1);
      expect(lines).toHaveLength(3);
    }
  });

  it('refuses bad parameters with a 400 naming the parameter', async () => {
    for (const [query, param] of [
      ['group_by=route', 'group_by'],
      ['', 'group_by'],
      ['group_by=team&from=yesterday', 'from'],
      ['group_by=team&from=2026-02-01&to=2026-01-01', 'to'],
      ['group_by=team&format=xml', 'format'],
    ] as const) {
      const answer = await spend(query);
      expect(answer.status, query).toBe(400);
      expect(answer.body.error.param, query).toBe(param);
    }
  });

  it("shows a Developer its team's keys only", async () => {
    const admin = (path: string, body: Record<string, unknown>) =>
      post(`${gateway.adminUrl}/api${path}`, body, { headers: ADMIN });
    const user = await admin('/users', {
      email: 'developer-spend@example.com',
      name: 'developer',
      role: 'developer',
      team_ids: ['team-b'],
    });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const token = await admin('/tokens', { name: 'developer', role: 'developer', user_id: user.body.id });
    const developer = { authorization: `Bearer ${token.body.token}` };
    const mine = await spend('group_by=virtual_key', developer);
    expect(mine.status, JSON.stringify(mine.body)).toBe(200);
    expect(mine.body.rows.map((row: { group: string }) => row.group)).toEqual(['vk-b']);
    expect((await spend('group_by=virtual_key&team_id=team-a', developer)).status).toBe(403);
  });
});
