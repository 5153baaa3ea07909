// The console's Pricing page in headless Chromium, against the embedded gateway and a cluster: a key with a budget
// is refused a model without a price; an Admin prices it on the page and the next request is served; edits the
// price from its row, sees a bad price refused next to its field, and deletes the override (the model is refused
// again). A Viewer reads the same prices with no form to change them. Screenshots go to test-artifacts/ui/.
import { join } from 'node:path';
import {
  type FakeUpstream,
  type GatewayConfigInput,
  type LaunchedGateway,
  startCluster,
  startEmbedded,
  startFakeOpenAi,
} from '@gw/testkit';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, launchChromium } from './chromium.ts';

const ADMIN_TOKEN = 'admin-token-for-the-pricing-page';
const MODEL = 'gpt-house-model';

const configOf = (fake: FakeUpstream): GatewayConfigInput => ({
  providers: {
    openai: { keys: [{ value: 'sk-upstream' }], network_config: { base_url: fake.url, max_retries: 0 } },
  },
});

const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config, adminToken: ADMIN_TOKEN })],
  ['cluster', (config: GatewayConfigInput) => startCluster({ config, adminToken: ADMIN_TOKEN })],
] as const;

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

describe.each(MODES)('the Pricing page in Chromium (%s)', (mode, start) => {
  let fake: FakeUpstream;
  let gateway: LaunchedGateway;
  let key = '';

  const admin = async <T = unknown>(method: string, path: string, body?: unknown) => {
    const answer = await fetch(`${gateway.adminUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: answer.status, body: (await answer.json()) as T };
  };
  const chat = async () => {
    const answer = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: `openai/${MODEL}`, messages: [{ role: 'user', content: 'price me' }] }),
    });
    return { status: answer.status, body: (await answer.json()) as { error?: { message: string } } };
  };
  const override = async () =>
    (await admin<{ override: unknown }>('GET', `/api/pricing/models/${MODEL}`)).body.override;

  async function openPricing(token: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(`${gateway.adminUrl}/ui/`);
    await page.getByLabel('Admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByTestId('who').waitFor();
    await page
      .getByRole('navigation', { name: 'Pages' })
      .getByRole('link', { name: 'Pricing', exact: true })
      .click();
    await page.getByRole('heading', { name: 'Prices in force (USD per million tokens)' }).waitFor();
    return page;
  }

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    gateway = await start(configOf(fake));
    const created = await admin<{ value: string }>('POST', '/api/governance/virtual-keys', {
      name: 'budgeted',
      provider_configs: [{ provider: 'openai', allowed_models: ['*'] }],
      budget: { max_limit: 100, reset_duration: '1d' },
    });
    key = created.body.value;
  }, 90_000);
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  it('prices a refused model, edits its price from its row, and deletes the override', async () => {
    const refused = await chat();
    expect(refused.status).toBe(403);
    expect(refused.body.error?.message).toContain("console's Pricing page");

    const page = await openPricing(ADMIN_TOKEN);
    const form = page.getByRole('form', { name: "Set a model's price" });
    await form.getByLabel('Model', { exact: true }).fill(MODEL);
    await form.getByLabel('Input (USD per million tokens)', { exact: true }).fill('1000');
    await form.getByLabel('Output (USD per million tokens)').fill('2000');
    await form.getByRole('button', { name: 'Save model price' }).click();
    await page.getByLabel('Find a model').fill('house');
    await page.getByTestId(`override-${MODEL}`).waitFor();
    expect(await override()).toEqual({ input: 1000, output: 2000 });
    await expect.poll(async () => (await chat()).status, { timeout: 10_000 }).toBe(200);
    await page.screenshot({ path: join(ARTIFACTS, `pricing-${mode}-override-1440.png`), fullPage: true });

    await page.getByRole('button', { name: `Edit ${MODEL}` }).click();
    const edit = page.getByRole('form', { name: "Set a model's price" });
    expect(await edit.getByLabel('Model', { exact: true }).inputValue()).toBe(MODEL);
    await edit.getByLabel('Input (USD per million tokens)', { exact: true }).fill('-1');
    await edit.getByRole('button', { name: 'Save model price' }).click();
    await expect.poll(() => page.getByTestId('error-input').textContent()).toContain('input');
    await edit.getByLabel('Input (USD per million tokens)', { exact: true }).fill('1000');
    await edit.getByLabel('Output (USD per million tokens)').fill('4000');
    await edit.getByRole('button', { name: 'Save model price' }).click();
    await expect.poll(override).toEqual({ input: 1000, output: 4000 });

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: `Delete ${MODEL}` }).click();
    await expect.poll(override).toBeNull();
    await expect.poll(async () => (await chat()).status, { timeout: 10_000 }).toBe(403);
    await page.close();
  });

  it('shows a Viewer the prices and no form to change them', async () => {
    const token = await admin<{ token: string }>('POST', '/api/tokens', { name: 'viewer', role: 'viewer' });
    expect(token.status).toBe(201);
    const page = await openPricing(token.body.token);
    await page.getByText('Your role reads prices only.').waitFor();
    await page.getByRole('cell', { name: 'gpt-4o-mini', exact: true }).waitFor();
    expect(await page.getByRole('button', { name: /^Save/ }).count()).toBe(0);
    expect(await page.getByRole('form', { name: "Set a model's price" }).count()).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, `pricing-${mode}-viewer-1440.png`), fullPage: true });
    await page.close();
  });
});
