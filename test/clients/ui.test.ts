// gw's web UI in a real browser (issue 16 item 5): headless Chromium (Debian's `chromium`, installed by .ci/run)
// driven by playwright-core against an embedded gateway and a fake OpenAI upstream. An Admin signs in with the
// admin token, adds a provider and a virtual key through the forms, sends a request through the gateway with
// that key and finds it in the logs (detail and live tail) and on the dashboard, adds an MCP client over HTTP,
// changes a budget; a Viewer sees no edit buttons and no secrets and is refused an edit. Every page is
// screenshotted into test-artifacts/ui/ (git-ignored), at 1280 px and on a narrow screen.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type FakeUpstream,
  type LaunchedGateway,
  type RunningMcpServer,
  startEmbedded,
  startEverythingServer,
  startFakeOpenAi,
} from '@gw/testkit';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ADMIN_TOKEN = 'admin-token-for-the-web-ui';
const CHROMIUM = process.env.GW_TEST_CHROMIUM ?? '/usr/bin/chromium';
const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts', 'ui');

let fake: FakeUpstream;
let mcpServer: RunningMcpServer;
let gateway: LaunchedGateway;
let browser: Browser;
let page: Page;
let keyValue = '';
let viewerToken = '';

const shot = (target: Page, name: string) =>
  target.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });

async function goTo(target: Page, label: string) {
  await target
    .getByRole('navigation', { name: 'Pages' })
    .getByRole('link', { name: label, exact: true })
    .click();
  await target.getByRole('heading', { level: 1 }).first().waitFor();
}

async function chat(key: string, content: string) {
  const answer = await fetch(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content }] }),
  });
  expect(answer.status, await answer.clone().text()).toBe(200);
  return answer.json();
}

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `no Chromium at ${CHROMIUM}: install Debian's package (apt-get install -y --no-install-recommends chromium, as .ci/run does) or set GW_TEST_CHROMIUM`,
    );
  }
  await mkdir(ARTIFACTS, { recursive: true });
  [fake, mcpServer] = await Promise.all([startFakeOpenAi(), startEverythingServer('streamableHttp')]);
  gateway = await startEmbedded({
    config: { client: { allow_anonymous_admin: false }, logs: { content: true } },
    adminToken: ADMIN_TOKEN,
  });
  const token = await fetch(`${gateway.url}/api/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'ui-viewer', role: 'viewer' }),
  });
  expect(token.status).toBe(201);
  viewerToken = ((await token.json()) as { token: string }).token;
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 }, timezoneId: 'Europe/Berlin' });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.close();
  await mcpServer?.close();
  await fake?.close();
});

describe('web UI in Chromium (embedded)', () => {
  it('sends / to the login page, refuses a wrong token with its message, signs in with the admin token', async () => {
    await page.goto(`${gateway.url}/`);
    expect(new URL(page.url()).pathname).toBe('/ui/');
    await page.getByLabel('Admin token').fill('wrong-token');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/token|unauthori/i);
    await shot(page, '00-login');
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByTestId('who').waitFor();
    expect(await page.getByTestId('who').textContent()).toContain('admin');
    expect(await page.getByRole('link', { name: 'System config' }).count()).toBe(1);
  });

  it('adds a provider through the form; its key is shown redacted', async () => {
    await goTo(page, 'Providers');
    await page.getByRole('button', { name: 'Add provider' }).click();
    const form = page.getByRole('form', { name: 'Add a provider' });
    await form.getByLabel('Name').fill('openai');
    await form.getByLabel('Base URL').fill(fake.url);
    await form.getByLabel('Key value').fill('sk-upstream-secret-value-1234');
    await form.getByRole('button', { name: 'Add provider' }).click();
    await page.getByRole('cell', { name: 'openai', exact: true }).waitFor();
    const table = await page.getByRole('table').first().textContent();
    expect(table).toContain(fake.url);
    expect(table).not.toContain('sk-upstream-secret-value-1234');
    expect(table).toMatch(/1234/);
    await shot(page, '01-providers');
  });

  it('tests a key: one real call on it, and says it works with the latency', async () => {
    const before = fake.requests.length;
    const row = page.getByRole('table').first();
    await row
      .getByRole('textbox', { name: /Model to test key/ })
      .first()
      .fill('gpt-4o-mini');
    await row.getByRole('button', { name: 'Test', exact: true }).first().click();
    await row.getByText(/works \(gpt-4o-mini, \d+ ms\)/).waitFor();
    expect(fake.requests.length - before).toBe(1);
    expect(fake.requests.at(-1)!.headers.authorization).toBe('Bearer sk-upstream-secret-value-1234');
  });

  it("shows the API's error message: a key naming a team that does not exist", async () => {
    await goTo(page, 'Virtual keys');
    await page.getByRole('button', { name: 'Create key' }).click();
    const form = page.getByRole('form', { name: 'Create a virtual key' });
    await form.getByLabel('Name').fill('bad-key');
    await form.getByLabel('Team id').fill('no-such-team');
    await form.getByRole('button', { name: 'Create key' }).click();
    await expect(form.getByRole('alert').textContent()).resolves.toContain(
      "team_id: teams 'no-such-team' does not exist",
    );
    await form.getByRole('button', { name: 'Cancel' }).click();
  });

  it('creates a virtual key, shows its value once, and the key works through the gateway', async () => {
    await page.getByRole('button', { name: 'Create key' }).click();
    const form = page.getByRole('form', { name: 'Create a virtual key' });
    await form.getByLabel('Name').fill('ui-key');
    await form.getByLabel('Provider', { exact: true }).selectOption('openai');
    await form.getByLabel('Budget (USD)').fill('10');
    await form.getByRole('button', { name: 'Create key' }).click();
    keyValue = (await page.getByTestId('once-value').textContent()) ?? '';
    expect(keyValue).toMatch(/^sk-gw-/);
    await shot(page, '02-virtual-key-created');
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.getByTestId('once-value').count()).toBe(0);
    await page.getByRole('cell', { name: 'ui-key', exact: true }).waitFor();
    // Reads show the hint only.
    expect(await page.getByRole('table').textContent()).not.toContain(keyValue);
    const answer = (await chat(keyValue, 'hello from the ui test')) as { choices: unknown[] };
    expect(answer.choices.length).toBe(1);
  });

  it('finds the request in the logs, opens its detail with request and response', async () => {
    await goTo(page, 'Logs');
    await page.getByLabel('Model').fill('gpt-4o-mini');
    // Records reach the store within the writer's one-second interval: apply until the row is there.
    await expect
      .poll(
        async () => {
          await page.getByRole('button', { name: 'Apply filters' }).click();
          await page.waitForTimeout(300);
          return page.getByRole('cell', { name: 'ui-key' }).count();
        },
        { timeout: 15_000 },
      )
      .toBeGreaterThan(0);
    await shot(page, '03-logs');
    await page
      .getByRole('row', { name: /ui-key/ })
      .first()
      .getByRole('link')
      .click();
    await page.getByRole('heading', { name: 'Request body' }).waitFor();
    const detail = await page.locator('main').textContent();
    expect(detail).toContain('hello from the ui test');
    expect(detail).toContain('ui-key');
    await shot(page, '04-log-detail');
  });

  it('shows a new request in the live tail (WebSocket)', async () => {
    await goTo(page, 'Logs');
    await page.getByRole('button', { name: 'Live tail' }).click();
    await expect.poll(() => page.getByTestId('tail-state').textContent(), { timeout: 10_000 }).toBe('live');
    await chat(keyValue, 'tailed request');
    await page.getByRole('table', { name: 'Live requests' }).waitFor({ timeout: 10_000 });
    expect(await page.getByRole('table', { name: 'Live requests' }).textContent()).toContain('ui-key');
    await shot(page, '05-live-tail');
    await page.getByRole('button', { name: 'Stop live tail' }).click();
  });

  it('counts the requests on the dashboard, per provider and model, with provider health', async () => {
    await goTo(page, 'Overview');
    await expect.poll(() => page.getByTestId('total-requests').textContent(), { timeout: 10_000 }).toBe('2');
    const main = await page.locator('main').textContent();
    expect(main).toContain('gpt-4o-mini');
    expect(await page.getByRole('heading', { name: 'Provider health' }).count()).toBe(1);
    expect(await page.locator('canvas').count()).toBeGreaterThanOrEqual(4);
    await shot(page, '06-overview');
  });

  it('adds an MCP client over HTTP and sees it connect with its tools', async () => {
    await goTo(page, 'MCP clients');
    await page.getByRole('button', { name: 'Add MCP client' }).click();
    const form = page.getByRole('form', { name: 'Add an MCP client' });
    await form.getByLabel('Name').fill('everything');
    await form.getByLabel('Connection type').selectOption('http');
    await form.getByLabel('URL (http or sse)').fill(mcpServer.url);
    await form.getByRole('button', { name: 'Add client' }).click();
    await page.getByRole('cell', { name: 'everything', exact: true }).waitFor();
    await expect
      .poll(
        async () => {
          await page.reload();
          await page.getByRole('cell', { name: 'everything', exact: true }).waitFor();
          return page.getByRole('row', { name: /everything/ }).textContent();
        },
        { timeout: 20_000 },
      )
      .toMatch(/connected.*echo/s);
    await page.getByRole('button', { name: 'Reconnect everything' }).click();
    await shot(page, '07-mcp');
  });

  it("changes a key's budget and shows its usage with the reset time", async () => {
    await goTo(page, 'Virtual keys');
    await page.getByRole('button', { name: 'Budget of ui-key' }).click();
    const form = page.getByRole('form', { name: 'Change the budget' });
    await form.getByLabel('Max spend (USD)').fill('25');
    await form.getByRole('button', { name: 'Save budget' }).click();
    await page.getByRole('cell', { name: '$25 / 1M' }).waitFor();
    const stored = await fetch(`${gateway.url}/api/governance/virtual-keys`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    const keys = (await stored.json()) as { name: string; budgets: { max_limit: number }[] }[];
    expect(keys.find((key) => key.name === 'ui-key')?.budgets[0]?.max_limit).toBe(25);
    await page.getByRole('button', { name: 'Usage of ui-key' }).click();
    await page.getByTestId('usage').waitFor();
    expect(await page.getByTestId('usage').textContent()).toMatch(/Budget .* of \$25\.00 per 1M.*resets/);
    await shot(page, '08-budget');
  });

  it('screenshots every page at 1280 px and on a narrow screen', async () => {
    const pages = await page.getByRole('navigation', { name: 'Pages' }).getByRole('link').allTextContents();
    expect(pages.length).toBe(11);
    for (const [index, label] of pages.entries()) {
      await goTo(page, label);
      await page.waitForLoadState('networkidle');
      expect(await page.getByRole('alert').count(), `${label} shows an error`).toBe(0);
      await shot(page, `page-${String(index).padStart(2, '0')}-${label.toLowerCase().replace(/\W+/g, '-')}`);
    }
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: 'Menu' }).click();
    await shot(page, 'narrow-menu');
    await page.getByRole('link', { name: 'Virtual keys' }).click();
    await page.getByRole('cell', { name: 'ui-key' }).first().waitFor();
    await shot(page, 'narrow-virtual-keys');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('a Viewer sees no edit buttons and no secrets, and is refused an edit', async () => {
    const viewer = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await viewer.goto(`${gateway.url}/ui/`);
      await viewer.getByLabel('Admin token').fill(viewerToken);
      await viewer.getByRole('button', { name: 'Sign in', exact: true }).click();
      await viewer.getByTestId('who').waitFor();
      expect(await viewer.getByTestId('who').textContent()).toContain('viewer');
      await goTo(viewer, 'Virtual keys');
      await viewer.getByRole('cell', { name: 'ui-key', exact: true }).waitFor();
      for (const name of [
        'Create key',
        'Rotate ui-key',
        'Budget of ui-key',
        'Delete ui-key',
        'Deactivate ui-key',
      ])
        expect(await viewer.getByRole('button', { name }).count(), name).toBe(0);
      await goTo(viewer, 'Providers');
      await viewer.getByRole('cell', { name: 'openai', exact: true }).waitFor();
      expect(await viewer.getByRole('button', { name: /Add|Edit|Delete/ }).count()).toBe(0);
      const providers = await viewer.locator('main').textContent();
      expect(providers).toContain('[redacted]');
      expect(providers).not.toMatch(/1234/);
      await shot(viewer, '09-viewer-providers');
      // The API refuses what the UI does not offer: the same call from the page, with the Viewer's token.
      const refused = await viewer.evaluate(async () => {
        const answer = await fetch('/api/governance/virtual-keys', {
          method: 'POST',
          headers: {
            authorization: `Bearer ${sessionStorage.getItem('gw.admin-token')}`,
            'content-type': 'application/json',
          },
          body: JSON.stringify({ name: 'sneaky', provider_configs: [] }),
        });
        return { status: answer.status, body: (await answer.json()) as { error: { message: string } } };
      });
      expect(refused.status).toBe(403);
      expect(refused.body.error.message).toContain('keys:write');
    } finally {
      await viewer.close();
    }
  });

  it('signs out', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('gw.admin-token'))).toBeNull();
  });
});
