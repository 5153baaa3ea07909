// Budgets in the console, in headless Chromium against the embedded gateway and a cluster: a key's budget bar
// fills with what its requests were charged and says when it resets; a key whose budget is used up says
// "exhausted" and is the one the over-budget filter leaves; Overview downloads a spend report whose row for the
// key holds what its budget was charged. Screenshots go to test-artifacts/ui/.
import { existsSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type FakeUpstream,
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { createTestDatabase, type TestDatabase } from '@gw/testkit/postgres';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ADMIN_TOKEN = 'admin-token-for-the-budget-bars';
const CHROMIUM = process.env.GW_TEST_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'ui');
const ROOMY = 'sk-gw-roomy00000000000000000000000000000000000000';
const TIGHT = 'sk-gw-tight00000000000000000000000000000000000000';

const configOf = (fake: FakeUpstream): GatewayConfigInput => ({
  providers: {
    openai: { keys: [{ value: 'sk-upstream' }], network_config: { base_url: fake.url, max_retries: 0 } },
  },
  governance: {
    virtual_keys: [
      {
        id: 'vk-roomy',
        name: 'roomy',
        value: ROOMY,
        provider_configs: [{ provider: 'openai', allowed_models: ['*'] }],
        budgets: [{ max_limit: 100, reset_duration: '1d' }],
      },
      {
        // One request uses it up: the fake answers 11 prompt and 7 completion tokens.
        id: 'vk-tight',
        name: 'tight',
        value: TIGHT,
        provider_configs: [{ provider: 'openai', allowed_models: ['*'] }],
        budgets: [{ max_limit: 0.000_01, reset_duration: '1d' }],
      },
    ],
    pricing: { 'gpt-4o': { input: 2.5, output: 10 } },
  },
  client: { allow_anonymous_admin: false },
});

const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    (config: GatewayConfigInput, database?: TestDatabase) =>
      startCluster({ config, adminToken: ADMIN_TOKEN, env: { GW_LOGS_DATABASE_URL: database!.url } }),
  ],
] as const;

let browser: Browser;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: install Debian's package (apt-get install -y --no-install-recommends chromium) or set GW_TEST_CHROMIUM`,
    );
  }
  await mkdir(ARTIFACTS, { recursive: true });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
}, scaled(60_000));

afterAll(async () => {
  await browser?.close();
});

describe.each(MODES)('budgets in the console, Chromium (%s)', (mode, start) => {
  let fake: FakeUpstream;
  let gateway: LaunchedGateway;
  let database: TestDatabase | undefined;

  const chat = async (key: string) =>
    (
      await fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'spend me' }] }),
      })
    ).status;
  const budgetUsed = async (id: string): Promise<number> => {
    const answer = await fetch(`${gateway.adminUrl}/api/governance/virtual-keys/${id}/usage`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const body = (await answer.json()) as {
      usage: Array<{ entries: Array<{ kind: string; used: number }> }>;
    };
    return body.usage[0]!.entries.find((entry) => entry.kind === 'budget')!.used;
  };

  async function signedIn(): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
    await page.goto(`${gateway.adminUrl}/ui/`);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByTestId('who').waitFor();
    return page;
  }
  const goTo = (page: Page, name: string) =>
    page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name, exact: true }).click();

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    if (mode === 'cluster') database = await createTestDatabase();
    gateway = await start(configOf(fake), database);
    expect(await chat(ROOMY)).toBe(200);
    expect(await chat(ROOMY)).toBe(200);
    expect(await chat(TIGHT)).toBe(200);
  }, scaled(90_000));
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
    await database?.drop();
  });

  it("fills each key's budget bar, says when it resets, and filters to the keys over budget", async () => {
    const page = await signedIn();
    await goTo(page, 'Virtual keys');
    const roomy = page.getByRole('meter', { name: 'Budget of roomy' });
    await roomy.waitFor();
    const used = await budgetUsed('vk-roomy');
    expect(used).toBeGreaterThan(0);
    expect(Number(await roomy.getAttribute('value'))).toBeCloseTo(used, 9);
    expect(Number(await roomy.getAttribute('max'))).toBe(100);
    const rows = page.getByRole('row');
    await expect
      .poll(() => rows.filter({ hasText: 'tight' }).getByTestId('budget-bar').textContent())
      .toMatch(/^\$0\.0000\d+ of \$0\.00001 · exhausted · resets in \d+ (h \d+ min|min)$/);
    expect(await rows.filter({ hasText: 'roomy' }).getByTestId('budget-bar').textContent()).not.toContain(
      'exhausted',
    );
    await page.screenshot({ path: join(ARTIFACTS, `budgets-${mode}-keys-1440.png`), fullPage: true });

    await page.getByLabel('Over budget only').check();
    await expect.poll(() => rows.filter({ hasText: 'roomy' }).count()).toBe(0);
    expect(await rows.filter({ hasText: 'tight' }).count()).toBe(1);
    await page.close();
  });

  it("downloads a spend report whose key rows hold what the keys' budgets were charged", async () => {
    // The report is read from the log: wait until it holds the three requests.
    await waitFor(
      async () => {
        const answer = await fetch(`${gateway.adminUrl}/api/spend?group_by=virtual_key`, {
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        });
        return ((await answer.json()) as { total: { requests: number } }).total.requests === 3 || undefined;
      },
      { timeoutMs: 15_000, what: 'the three requests in the log' },
    );
    const page = await signedIn();
    await goTo(page, 'Overview');
    await page.getByRole('heading', { name: 'Spend report' }).waitFor();
    const [download] = await Promise.all([
      page.waitForEvent('download'),
      page.getByRole('button', { name: 'Download spend report' }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^spend-virtual_key-\d{4}-\d{2}\.csv$/);
    const lines = (await readFile((await download.path())!, 'utf8')).trimEnd().split('\r\n');
    expect(lines[0]).toBe('virtual_key,name,requests,input_tokens,output_tokens,cached_tokens,cost');
    expect(lines.find((line) => line.startsWith('vk-roomy,roomy,2,'))).toMatch(
      new RegExp(`,${(await budgetUsed('vk-roomy')).toFixed(6)}$`),
    );
    expect(lines.find((line) => line.startsWith('vk-tight,tight,1,'))).toMatch(
      new RegExp(`,${(await budgetUsed('vk-tight')).toFixed(6)}$`),
    );
    await page.close();
  });
});
