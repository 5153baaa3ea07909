// The console's pricing in headless Chromium, against the embedded gateway and a cluster (with its request log).
// A key with a budget is refused a model without a price: the log detail and the playground link the refusal to
// the Pricing page opened on that model, where an Admin prices it and the next request is served; the price is
// edited from its row (a bad one refused next to its field) and deleted (the model is refused again). A price's
// long-context tier is edited and removed there, with batch, image and per-unit prices beside it: the API returns
// exactly the fields filled in, and the next long request is charged at the tier. A price scoped to a provider
// is kept as `provider/model`. The first run's key for a model nothing prices goes through a price step and
// serves at once, charged at the price entered. A Viewer reads the prices with no control to change them.
// Screenshots go to test-artifacts/ui/.
import { join } from 'node:path';
import {
  chatCompletion,
  type FakeUpstream,
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startEmbedded,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { startClusterWithLogs } from '@gw/testkit/postgres';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, launchChromium } from './chromium.ts';

const ADMIN_TOKEN = 'admin-token-for-the-pricing-page';
const MODEL = 'gpt-house-model';
const TIER_MODEL = 'gpt-long-context';
const FIRST_RUN_MODEL = 'gpt-first-run';

const configOf = (fake: FakeUpstream): GatewayConfigInput => ({
  providers: {
    openai: { keys: [{ value: 'sk-upstream' }], network_config: { base_url: fake.url, max_retries: 0 } },
  },
});

const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    (config: GatewayConfigInput) =>
      startClusterWithLogs({ config, adminToken: ADMIN_TOKEN, readyTimeoutMs: 60_000 }),
  ],
] as const;

/** USD as whole micro-dollars, so that sums of prices compare exactly. */
const micros = (usd: number) => Math.round(usd * 1_000_000);

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
}, scaled(60_000));

afterAll(async () => {
  await browser?.close();
});

describe.each(MODES)('pricing in the console, in Chromium (%s)', (mode, start) => {
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
  const chat = async (model = MODEL, virtualKey = key) => {
    const answer = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${virtualKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: `openai/${model}`, messages: [{ role: 'user', content: 'price me' }] }),
    });
    return {
      status: answer.status,
      id: answer.headers.get('x-request-id') ?? '',
      body: (await answer.json()) as { error?: { message: string } },
    };
  };
  const override = async (model = MODEL) =>
    (await admin<{ override: unknown }>('GET', `/api/pricing/models/${encodeURIComponent(model)}`)).body
      .override;
  /** The request's log record once its cost is settled (the record is written after the settle). */
  const costOf = async (id: string) =>
    micros(
      await waitFor(
        async () => {
          const answer = await admin<{ cost: number }>('GET', `/api/logs/${id}`);
          return answer.status === 200 && answer.body.cost > 0 ? answer.body.cost : undefined;
        },
        { timeoutMs: 15_000, what: `the settled log record of ${id}` },
      ),
    );

  async function signIn(token: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    await page.goto(`${gateway.adminUrl}/ui/`);
    await page.getByLabel('Admin token').fill(token);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByTestId('who').waitFor();
    return page;
  }
  async function openPricing(token: string): Promise<Page> {
    const page = await signIn(token);
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
  }, scaled(90_000));
  afterAll(async () => {
    await gateway?.close();
    await fake?.close();
  });

  it('links a refusal for want of a price to the Pricing page, where the model is priced and then served', async () => {
    const refused = await chat();
    expect(refused.status).toBe(403);
    expect(refused.body.error?.message).toContain("console's Pricing page");

    // The refusal's log record links to the Pricing page opened on the model.
    const page = await signIn(ADMIN_TOKEN);
    await page.goto(`${gateway.adminUrl}/ui/logs/${refused.id}`);
    const priceIt = page.getByTestId('price-it');
    await expect.poll(() => priceIt.textContent(), { timeout: scaled(15_000) }).toContain(MODEL);
    await priceIt.click();
    const form = page.getByRole('form', { name: "Set a model's price" });
    expect(await form.getByLabel('Model', { exact: true }).inputValue()).toBe(MODEL);
    expect(new URL(page.url()).pathname).toBe('/ui/pricing');
    await form.getByLabel('Input', { exact: true }).fill('1000');
    await form.getByLabel('Output', { exact: true }).fill('2000');
    await form.getByRole('button', { name: 'Save model price' }).click();
    await page.getByTestId(`override-${MODEL}`).waitFor();
    // Fields left empty are not sent: the price falls back as the schema says.
    expect(await override()).toEqual({ input: 1000, output: 2000 });
    await expect.poll(async () => (await chat()).status, { timeout: scaled(10_000) }).toBe(200);
    await page.screenshot({ path: join(ARTIFACTS, `pricing-${mode}-override-1440.png`), fullPage: true });
    await page.close();
  });

  it('edits the price from its row, refuses a bad one next to its field, and deletes it', async () => {
    const page = await openPricing(ADMIN_TOKEN);
    await page.getByLabel('Find a model').fill(MODEL);
    await page.getByRole('button', { name: `Edit ${MODEL}` }).click();
    const edit = page.getByRole('form', { name: "Set a model's price" });
    expect(await edit.getByLabel('Model', { exact: true }).inputValue()).toBe(MODEL);
    await edit.getByLabel('Input', { exact: true }).fill('-1');
    await edit.getByRole('button', { name: 'Save model price' }).click();
    await expect.poll(() => page.getByTestId('error-input').textContent()).toContain('input');
    await edit.getByLabel('Input', { exact: true }).fill('1000');
    await edit.getByLabel('Output', { exact: true }).fill('4000');
    await edit.getByRole('button', { name: 'Save model price' }).click();
    await expect.poll(() => override()).toEqual({ input: 1000, output: 4000 });

    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: `Delete ${MODEL}` }).click();
    await expect.poll(() => override()).toBeNull();
    await expect.poll(async () => (await chat()).status, { timeout: scaled(10_000) }).toBe(403);
    await page.close();
  });

  it("links the playground's refusal for want of a price to the Pricing page on that model", async () => {
    // A cluster's ingress is another origin than the console's: it must allow the console's calls.
    const allowed = await admin('PUT', '/api/config', {
      client: { cors_allowed_origins: [gateway.adminUrl] },
    });
    expect(allowed.status).toBe(200);
    const preflight = () =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'OPTIONS',
        headers: { origin: gateway.adminUrl, 'access-control-request-method': 'POST' },
      });
    await expect.poll(async () => (await preflight()).status, { timeout: scaled(10_000) }).toBe(204);

    const page = await signIn(ADMIN_TOKEN);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Playground' }).click();
    const send = page.getByRole('form', { name: 'Send a chat' });
    await send.getByLabel('Gateway address').fill(gateway.url);
    await send.getByLabel('Virtual key').fill(key);
    await send.getByLabel('Model').fill(`openai/${MODEL}`);
    await send.getByRole('button', { name: 'Send' }).click();
    await page.getByTestId('price-it').click();
    expect(
      await page
        .getByRole('form', { name: "Set a model's price" })
        .getByLabel('Model', { exact: true })
        .inputValue(),
    ).toBe(MODEL);
    await page.close();
  });

  it("edits a long-context tier's price: the API returns it and the next long request is charged at it", async () => {
    // A price with a tier, as the API sets it (or a built-in price holds it): the form shows the tier to edit.
    const set = await admin('PUT', `/api/pricing/models/${TIER_MODEL}`, {
      input: 1,
      output: 2,
      above: { tokens: 100, input: 10, output: 20 },
    });
    expect(set.status).toBe(200);
    const page = await openPricing(ADMIN_TOKEN);
    await page.getByLabel('Find a model').fill(TIER_MODEL);
    await page.getByRole('button', { name: `Edit ${TIER_MODEL}` }).click();
    const form = page.getByRole('form', { name: "Set a model's price" });
    const tier = form.getByRole('group', { name: 'Long-context tier' });
    expect(await tier.getByLabel('Above').inputValue()).toBe('100');
    expect(await tier.getByLabel('Input', { exact: true }).inputValue()).toBe('10');
    await tier.getByLabel('Input', { exact: true }).fill('30');
    await tier.getByLabel('Output', { exact: true }).fill('60');
    // Batch prices, image tokens and a per-unit price beside it (none of them bills a chat's text tokens).
    await form.getByRole('button', { name: 'Add batch prices' }).click();
    const batch = form.getByRole('group', { name: 'Batch prices' });
    await batch.getByLabel('Input', { exact: true }).fill('0.5');
    await batch.getByLabel('Output', { exact: true }).fill('1');
    await form.getByText('Cache, audio and image tokens').first().click();
    await form.getByLabel('Image input').first().fill('5');
    await form.getByText('Prices per request, image, second of audio or character').click();
    await form.getByLabel('Per image').fill('0.04');
    await page.screenshot({ path: join(ARTIFACTS, `pricing-${mode}-tier-1440.png`), fullPage: true });
    await form.getByRole('button', { name: 'Save model price' }).click();
    await expect
      .poll(() => override(TIER_MODEL))
      .toEqual({
        input: 1,
        output: 2,
        image_input: 5,
        per_image: 0.04,
        above: { tokens: 100, input: 30, output: 60 },
        batch: { input: 0.5, output: 1 },
      });

    // 300 prompt tokens are above the tier's 100: the whole request is charged at the tier's prices.
    fake.enqueue({
      json: chatCompletion({
        model: TIER_MODEL,
        usage: { prompt_tokens: 300, completion_tokens: 10, total_tokens: 310 },
      }),
    });
    const long = await chat(TIER_MODEL);
    expect(long.status).toBe(200);
    expect(await costOf(long.id)).toBe(300 * 30 + 10 * 60);

    // The tier removed in the console is gone from the price.
    await page.getByRole('button', { name: `Edit ${TIER_MODEL}` }).click();
    await form.getByRole('button', { name: 'Remove long-context tier' }).click();
    await form.getByRole('button', { name: 'Save model price' }).click();
    await expect
      .poll(() => override(TIER_MODEL))
      .toEqual({
        input: 1,
        output: 2,
        image_input: 5,
        per_image: 0.04,
        batch: { input: 0.5, output: 1 },
      });
    await page.close();
  });

  it('keeps a price scoped to a provider as provider/model, and edits it with its scope', async () => {
    const page = await openPricing(ADMIN_TOKEN);
    const form = page.getByRole('form', { name: "Set a model's price" });
    await form.getByLabel('Model', { exact: true }).fill('gpt-scoped');
    await form.getByLabel('Scope to provider').selectOption('openai');
    await form.getByLabel('Input', { exact: true }).fill('3');
    await form.getByLabel('Output', { exact: true }).fill('6');
    await form.getByRole('button', { name: 'Save model price' }).click();
    await expect.poll(() => override('openai/gpt-scoped')).toEqual({ input: 3, output: 6 });
    expect(await override('gpt-scoped')).toBeNull();

    await page.getByLabel('Find a model').fill('gpt-scoped');
    await page.getByRole('button', { name: 'Edit openai/gpt-scoped' }).click();
    expect(await form.getByLabel('Model', { exact: true }).inputValue()).toBe('gpt-scoped');
    expect(await form.getByLabel('Scope to provider').inputValue()).toBe('openai');
    page.once('dialog', (dialog) => void dialog.accept());
    await page.getByRole('button', { name: 'Delete openai/gpt-scoped' }).click();
    await expect.poll(() => override('openai/gpt-scoped')).toBeNull();
    await page.close();
  });

  it("prices the first run's model before its key: the key serves at once, charged at the price entered", async () => {
    const page = await signIn(ADMIN_TOKEN);
    await page.getByRole('navigation', { name: 'Pages' }).getByRole('link', { name: 'Virtual keys' }).click();
    await page.getByRole('button', { name: 'Create key' }).click();
    const create = page.getByRole('form', { name: 'Create a virtual key' });
    await create.getByLabel('Name').fill('first-run');
    await create.getByLabel('Provider').selectOption('openai');
    await create.getByLabel('Allowed models (comma-separated)').fill(FIRST_RUN_MODEL);
    await create.getByLabel('Budget (USD)').fill('10');
    await create.getByRole('button', { name: 'Create key' }).click();

    const step = page.getByRole('form', { name: "Price the key's models" });
    const fields = step.getByRole('group', { name: FIRST_RUN_MODEL });
    expect(await fields.getByLabel('Input').inputValue()).toBe('');
    const later = page.getByTestId('price-later');
    expect(await later.textContent()).toContain('refused with 403');
    expect(await later.getByRole('link', { name: 'Pricing page' }).getAttribute('href')).toBe(
      `/ui/pricing?model=${FIRST_RUN_MODEL}`,
    );
    await fields.getByLabel('Input').fill('2000');
    await fields.getByLabel('Output').fill('4000');
    await page.screenshot({ path: join(ARTIFACTS, `pricing-${mode}-first-run-1440.png`), fullPage: true });
    await step.getByRole('button', { name: 'Save prices and create key' }).click();
    const value = (await page.getByTestId('once-value').textContent()) ?? '';
    expect(value).toMatch(/^sk-gw-/);
    expect(await page.getByTestId('snippet-curl').textContent()).toContain(`openai/${FIRST_RUN_MODEL}`);
    expect(await override(FIRST_RUN_MODEL)).toEqual({ input: 2000, output: 4000 });

    // The fake answers 11 prompt tokens (2 of them cached, at the input price: none set) and 7 completion ones.
    const served = await chat(FIRST_RUN_MODEL, value);
    expect(served.status).toBe(200);
    expect(await costOf(served.id)).toBe(11 * 2000 + 7 * 4000);
    await page.close();
  });

  it('shows a Viewer the prices and no control to change them', async () => {
    const token = await admin<{ token: string }>('POST', '/api/tokens', { name: 'viewer', role: 'viewer' });
    expect(token.status).toBe(201);
    const page = await openPricing(token.body.token);
    await page.getByText('Your role reads prices only.').waitFor();
    await page.getByRole('cell', { name: 'gpt-4o-mini', exact: true }).waitFor();
    await page.getByRole('cell', { name: TIER_MODEL, exact: true }).first().waitFor();
    const controls = page
      .getByRole('main')
      .getByRole('button', { name: /^(Save|Delete|Add|Remove|Edit|Override|Back to built-in|Refuse)/ });
    expect(await controls.count()).toBe(0);
    expect(await page.getByRole('form', { name: "Set a model's price" }).count()).toBe(0);
    await page.screenshot({ path: join(ARTIFACTS, `pricing-${mode}-viewer-1440.png`), fullPage: true });
    await page.close();
  });
});
