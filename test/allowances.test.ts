// Allowances in a cluster (docs/governance.md "Allowances"): two ingress replicas admit a key's traffic from the
// slices they hold, without a Redis call on most requests' path, and the key's budget and request limit read
// exactly what was served once the requests are settled. The store-level cases (a killed ingress, a period
// boundary, a lowered limit, exactness at a limit) are packages/shared/src/store/allowance-store.test.ts.
import { type FakeOpenAi, type LaunchedCluster, startCluster, startFakeOpenAi, waitFor } from '@gw/testkit';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { get, post } from './support/http.ts';

const ADMIN = { authorization: 'Bearer allowances-admin' };
const CHAT = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
/** The fake answers 18 tokens; at $1,000 per million tokens a request costs $0.018. */
const COST_MICROS = 18_000;

/** An ingress's governed admissions so far, by path (`gw_governance_admissions_total`). */
async function admissions(url: string): Promise<{ local: number; exact: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const count = (path: string) =>
    Number(
      new RegExp(`^gw_governance_admissions_total\\{path="${path}"[^}]*\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0,
    );
  return { local: count('local'), exact: count('exact') };
}

describe('allowances (cluster: 2 ingress)', () => {
  let fake: FakeOpenAi;
  let gateway: LaunchedCluster;
  beforeAll(async () => {
    fake = await startFakeOpenAi();
    gateway = await startCluster({
      adminToken: 'allowances-admin',
      replicas: { ingress: 2 },
      config: {
        providers: {
          openai: {
            keys: [{ value: 'sk-upstream' }],
            network_config: { base_url: fake.url, max_retries: 0 },
          },
        },
        governance: { pricing: { 'gpt-4o-mini': { input: 1000, output: 1000 } } },
      },
    });
  }, 60_000);
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  it('admits most requests from slices, and the budget and request limit read what was served', async () => {
    const created = await post(
      `${gateway.adminUrl}/api/governance/virtual-keys`,
      {
        name: 'sliced',
        provider_configs: [{ provider: 'openai' }],
        budgets: [{ max_limit: 1_000, reset_duration: '1d' }],
        rate_limit: { request_max_limit: 100_000, request_reset_duration: '1h' },
      },
      { headers: ADMIN },
    );
    expect(created.status).toBe(201);
    const key = created.body as { id: string; value: string };
    const before = await Promise.all(gateway.urls.map(admissions));
    const dispatcher = new Agent({ connections: 20 });
    const statuses: number[] = [];
    // Waves of 20, alternating over the ingresses: slices form in the first waves, then serve.
    for (let wave = 0; wave < 20; wave++) {
      statuses.push(
        ...(await Promise.all(
          Array.from({ length: 20 }, async (_, index) => {
            const response = await request(`${gateway.urls[index % 2]}/v1/chat/completions`, {
              method: 'POST',
              headers: { 'content-type': 'application/json', 'x-gw-vk': key.value },
              body: JSON.stringify(CHAT),
              dispatcher,
            });
            await response.body.dump();
            return response.statusCode;
          }),
        )),
      );
    }
    await dispatcher.close();
    expect(statuses.filter((status) => status === 200)).toHaveLength(400);
    const after = await Promise.all(gateway.urls.map(admissions));
    const local = after.reduce((sum, counts, index) => sum + counts.local - before[index]!.local, 0);
    const exact = after.reduce((sum, counts, index) => sum + counts.exact - before[index]!.exact, 0);
    expect(local + exact).toBe(400);
    expect(local).toBeGreaterThan(300);
    // Slices held are not spend: the usage reads what the 400 served requests cost and counted.
    await waitFor(
      async () => {
        const usage = await get(`${gateway.adminUrl}/api/governance/virtual-keys/${key.id}/usage`, ADMIN);
        const entries = usage.body.usage[0].entries as Array<{ kind: string; used: number }>;
        const budget = entries.find((entry) => entry.kind === 'budget')!;
        const requests = entries.find((entry) => entry.kind === 'requests')!;
        return Math.round(budget.used * 1e6) === 400 * COST_MICROS && requests.used === 400;
      },
      { timeoutMs: 10_000, what: 'the usage of 400 served requests' },
    );
  }, 60_000);
});
