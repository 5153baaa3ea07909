// The console's forms, first run and pages for what the API has (issue 29 items 3 to 5) in headless Chromium,
// against the embedded gateway and the cluster. An Admin goes from an empty gateway to a working key by the
// first-run steps (provider, key test, virtual key, then curl, SDK and the playground with that key), edits a
// key, owners, aliases, alert channels, guardrail rules and settings through forms, and reads the cache, vault,
// routing health and pricing pages; what the API refuses shows next to the field. In a cluster the UI comes
// from the admin and `/v1` from the ingress: the browser reaches both through one host in front (as a deployment
// puts them), and the admin's own port serves the same console, whose playground calls the ingress directly once
// `client.cors_allowed_origins` names the admin's origin. Screenshots of every page at 1440×900 and
// 390×844 go to test-artifacts/ui/.
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  type FakeUpstream,
  type GatewayConfigInput,
  type LaunchedGateway,
  startCluster,
  startEmbedded,
  startFakeOpenAi,
  startFakeSlackWebhook,
} from '@gw/testkit';
import { createTestDatabase, type TestDatabase } from '@gw/testkit/postgres';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, launchChromium } from './chromium.ts';

const ADMIN_TOKEN = 'admin-token-for-the-console';
const CONFIG: GatewayConfigInput = {
  client: { allow_anonymous_admin: false },
  logs: { content: true },
  cache: { enabled: true, types: ['exact'] },
};

const MODES = [
  ['embedded', () => startEmbedded({ config: CONFIG, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    // A cluster keeps request logs (the cache and pricing pages read them) in PostgreSQL.
    (database?: TestDatabase) =>
      startCluster({ config: CONFIG, adminToken: ADMIN_TOKEN, env: { GW_LOGS_DATABASE_URL: database!.url } }),
  ],
] as const;

/** One host in front of a cluster: `/v1/*` to the ingress, everything else to the admin. */
async function startFrontProxy(ingress: string, admin: string): Promise<{ url: string; server: Server }> {
  const server = createServer((incoming, outgoing) => {
    const target = new URL(incoming.url?.startsWith('/v1/') ? ingress : admin);
    const forwarded = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        method: incoming.method,
        path: incoming.url,
        headers: { ...incoming.headers, host: target.host },
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    forwarded.on('error', () => outgoing.destroy());
    incoming.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

describe.each(MODES)('console forms, first run and pages in Chromium (%s)', (mode, start) => {
  let fake: FakeUpstream;
  let slack: FakeUpstream;
  let gateway: LaunchedGateway;
  let database: TestDatabase | undefined;
  let front: { url: string; server: Server } | undefined;
  let site = '';
  let page: Page;
  let keyValue = '';
  let keyId = '';
  let teamId = '';

  const admin = async <T = unknown>(method: string, path: string, body?: unknown) => {
    const answer = await fetch(`${gateway.adminUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: answer.status, body: (await answer.json()) as T };
  };

  const chat = (content: string) =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keyValue}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content }] }),
    });

  const shot = (name: string) =>
    page.screenshot({ path: join(ARTIFACTS, `console-${mode}-${name}.png`), fullPage: true });

  /** Opens a page by its link; React keeps the page shown until the next one's chunk is in, so wait for its title. */
  async function goTo(label: string) {
    const link = page
      .getByRole('navigation', { name: 'Pages' })
      .getByRole('link', { name: label, exact: true });
    const path = new URL(`${site}${await link.getAttribute('href')}`).pathname;
    const title = page.locator('main h1').first();
    const before = new URL(page.url()).pathname === path ? undefined : await title.textContent();
    await link.click();
    await page.waitForURL((url) => url.pathname === path);
    await expect.poll(() => title.textContent()).not.toBe(before);
  }

  async function signIn(target: Page, origin: string, token: string) {
    await target.goto(`${origin}/ui/`);
    await target.getByLabel('Admin token').fill(token);
    await target.getByRole('button', { name: 'Sign in', exact: true }).click();
    await target.getByTestId('who').waitFor();
  }

  beforeAll(async () => {
    [fake, slack] = await Promise.all([startFakeOpenAi(), startFakeSlackWebhook()]);
    if (mode === 'cluster') database = await createTestDatabase();
    gateway = await start(database);
    if (gateway.mode === 'cluster') front = await startFrontProxy(gateway.url, gateway.adminUrl);
    site = front?.url ?? gateway.url;
    page = await browser.newPage({ viewport: { width: 1440, height: 900 }, timezoneId: 'Europe/Berlin' });
    page.on('dialog', (dialog) => void dialog.accept());
  }, 120_000);

  afterAll(async () => {
    await page?.close();
    front?.server.close();
    await gateway?.close();
    await Promise.all([fake?.close(), slack?.close(), database?.drop()]);
  });

  it('offers no SSO button when OIDC is off, and signs in with the admin token', async () => {
    await page.goto(`${site}/ui/`);
    await page.getByLabel('Admin token').waitFor();
    await page.waitForLoadState('networkidle');
    expect(await page.getByRole('link', { name: 'Sign in with SSO' }).count()).toBe(0);
    await signIn(page, site, ADMIN_TOKEN);
  });

  it('leads an empty gateway through the first steps: add a provider, test its key', async () => {
    await goTo('Providers');
    const steps = page.getByRole('region', { name: 'Getting started' });
    await expect.poll(() => steps.textContent()).toContain('Add a provider with its API key');
    expect(await page.getByText('No providers yet. Add one with its API key').count()).toBe(1);
    await shot('first-run-1440');
    await page.getByRole('button', { name: 'Add provider' }).click();
    const form = page.getByRole('form', { name: 'Add a provider' });
    await form.getByLabel('Name', { exact: true }).fill('openai');
    await form.getByLabel('Key value').fill('sk-upstream-console-5678');
    await form.getByLabel('Models (comma-separated)').fill('gpt-4o-mini');
    await form.getByLabel('Base URL').fill(fake.url);
    await form.getByLabel('Retries').fill('0');
    await form.getByRole('button', { name: 'Add provider' }).click();
    await page.getByRole('cell', { name: 'openai', exact: true }).waitFor();
    const stored = await admin<{
      keys: { weight: number; models: string[] }[];
      network_config: { max_retries: number };
    }>('GET', '/api/providers/openai');
    expect(stored.body.keys[0]).toMatchObject({ weight: 1, models: ['gpt-4o-mini'] });
    expect(stored.body.network_config.max_retries).toBe(0);
    await expect.poll(() => steps.textContent()).toContain('Add a provider with its API key: done');

    const before = fake.requests.length;
    await page.getByRole('button', { name: 'Test', exact: true }).click();
    await page.getByText(/works \(gpt-4o-mini, \d+ ms\)/).waitFor();
    expect(fake.requests.length - before).toBe(1);
    await expect.poll(() => steps.textContent()).toContain('Test its key (one real call): done');
  });

  it('edits a provider by form: a key’s weight and models, the network settings', async () => {
    await page.getByRole('button', { name: 'Edit openai' }).click();
    const form = page.getByRole('form', { name: 'Edit openai' });
    await form.getByLabel('Weight of key-1').fill('3');
    await form.getByLabel('Models of key-1 (comma-separated)').fill('gpt-4o-mini, gpt-4o');
    await form.getByLabel('Timeout (ms)').fill('30000');
    await form.getByRole('button', { name: 'Save provider' }).click();
    await form.waitFor({ state: 'detached' });
    const stored = await admin<{
      keys: { id: string; weight: number; models: string[] }[];
      network_config: { timeout_ms: number; base_url: string };
    }>('GET', '/api/providers/openai');
    expect(stored.body.keys).toEqual([
      expect.objectContaining({ id: 'key-1', weight: 3, models: ['gpt-4o-mini', 'gpt-4o'] }),
    ]);
    expect(stored.body.network_config).toMatchObject({ timeout_ms: 30000, base_url: fake.url });
    // The secret stays as it was: the key still works upstream.
    await page.getByRole('button', { name: 'Test', exact: true }).click();
    await page.getByText(/works \(gpt-4o-mini/).waitFor();
    expect(fake.requests.at(-1)!.headers.authorization).toBe('Bearer sk-upstream-console-5678');
  });

  it('shows a role without secrets:reference what a key value may be, and the API’s 400 next to the field', async () => {
    await admin('POST', '/api/roles', {
      id: 'provider-editor',
      permissions: ['providers:read', 'providers:write'],
    });
    const token = await admin<{ token: string }>('POST', '/api/tokens', {
      name: 'pe',
      role: 'provider-editor',
    });
    const editor = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    try {
      await signIn(editor, site, token.body.token);
      await editor
        .getByRole('navigation', { name: 'Pages' })
        .getByRole('link', { name: 'Providers' })
        .click();
      await editor.getByRole('button', { name: 'Add provider' }).click();
      const form = editor.getByRole('form', { name: 'Add a provider' });
      const hint = await form.getByText(/provider's API key/).textContent();
      expect(hint).not.toContain('env.');
      expect(hint).toContain('need Admin');
      await form.getByLabel('Name', { exact: true }).fill('anthropic');
      await form.getByLabel('Key value').fill('env.ANTHROPIC_API_KEY');
      await form.getByRole('button', { name: 'Add provider' }).click();
      await expect
        .poll(() => form.getByTestId('error-key_value').textContent())
        .toContain("'env.ANTHROPIC_API_KEY' is an environment or secret-manager reference");
    } finally {
      await editor.close();
    }
  });

  it('makes customers and teams by form, a team’s customer picked by name', async () => {
    await goTo('Teams & budgets');
    await page.getByRole('button', { name: 'Add to Customers' }).click();
    await page.getByRole('form', { name: 'New' }).getByLabel('Name').fill('Acme');
    await page.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('cell', { name: 'Acme', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Add to Teams' }).click();
    const form = page.getByRole('form', { name: 'New' });
    await form.getByLabel('Name').fill('Platform');
    await expect
      .poll(() => form.getByLabel('Customer').locator('option').allTextContents())
      .toContain('Acme');
    await form.getByLabel('Customer').selectOption({ label: 'Acme' });
    await form.getByRole('button', { name: 'Create', exact: true }).click();
    await page.getByRole('cell', { name: 'Platform', exact: true }).waitFor();
    const [customers, teams] = await Promise.all([
      admin<{ id: string; name: string }[]>('GET', '/api/governance/customers'),
      admin<{ id: string; name: string; customer_id: string }[]>('GET', '/api/governance/teams'),
    ]);
    const team = teams.body.find((entry) => entry.name === 'Platform')!;
    expect(team.customer_id).toBe(customers.body.find((entry) => entry.name === 'Acme')!.id);
    teamId = team.id;
    await shot('teams-1440');
  });

  it('creates a virtual key, then shows curl and SDK snippets with its value', async () => {
    await goTo('Virtual keys');
    expect(await page.getByText('No virtual keys yet.').count()).toBe(1);
    await page.getByRole('button', { name: 'Create key' }).click();
    const form = page.getByRole('form', { name: 'Create a virtual key' });
    await form.getByLabel('Name', { exact: true }).fill('console-key');
    await form.getByLabel('Provider', { exact: true }).selectOption('openai');
    await form.getByLabel('Team id').fill(teamId);
    await form.getByRole('button', { name: 'Create key' }).click();
    keyValue = (await page.getByTestId('once-value').textContent()) ?? '';
    expect(keyValue).toMatch(/^sk-gw-/);
    const curl = await page.getByTestId('snippet-curl').textContent();
    expect(curl).toContain(`Authorization: Bearer ${keyValue}`);
    expect(curl).toContain(`${site}/v1/chat/completions`);
    expect(curl).toContain('"model": "openai/gpt-4o-mini"');
    expect(await page.getByTestId('snippet-javascript').textContent()).toContain(`apiKey: '${keyValue}'`);
    expect(await page.getByTestId('snippet-python').textContent()).toContain(`api_key="${keyValue}"`);
    expect(await page.getByRole('region', { name: 'Getting started' }).count()).toBe(0);
    await shot('key-snippets-1440');
    const keys = await admin<{ id: string; name: string; team_id: string }[]>(
      'GET',
      '/api/governance/virtual-keys',
    );
    const created = keys.body.find((key) => key.name === 'console-key')!;
    expect(created.team_id).toBe(teamId);
    keyId = created.id;
  });

  it('sends a streamed chat from the playground with the new key, showing the answer and its headers', async () => {
    await page.getByRole('link', { name: 'Try it in the playground' }).click();
    const form = page.getByRole('form', { name: 'Send a chat' });
    expect(await form.getByLabel('Virtual key').inputValue()).toBe(keyValue);
    expect(await form.getByLabel('Model').inputValue()).toBe('openai/gpt-4o-mini');
    await form.getByLabel('Message').fill('Stream me a hello');
    await form.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.getByTestId('answer').textContent()).toBe('Hello wörld');
    const facts = await page.getByTestId('answer-facts').textContent();
    expect(facts).toContain('200');
    expect(facts).toMatch(/Served by.*gpt-4o-mini/);
    expect(facts).toMatch(/Cachemiss/);
    expect(await page.getByTestId('answer-headers').textContent()).toMatch(/x-request-id: \S+/);
    const sent = fake.requests.at(-1)!;
    expect(sent.headers.authorization).toBe('Bearer sk-upstream-console-5678');
    expect(sent.body).toMatchObject({
      stream: true,
      messages: [{ role: 'user', content: 'Stream me a hello' }],
    });

    // The same question unstreamed twice: the second is answered by the cache, as its header says.
    await form.getByLabel('Stream the answer').uncheck();
    await form.getByLabel('Message').fill('Cache me');
    await form.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.getByTestId('answer').textContent()).toBe('Hello from the fake upstream');
    const upstreamCalls = fake.requests.length;
    await form.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.getByTestId('answer-facts').textContent()).toMatch(/Cachehit/);
    expect(fake.requests.length).toBe(upstreamCalls);
    await shot('playground-1440');
  });

  it('shows the cache’s hit rate per scope from the log, and removes a key’s scope', async () => {
    await goTo('Cache');
    await expect
      .poll(
        async () => {
          await page.reload();
          await page.getByRole('heading', { name: 'Cache', exact: true }).waitFor();
          return page.getByRole('row', { name: new RegExp(`vk:${keyId}`) }).count();
        },
        { timeout: 15_000 },
      )
      .toBe(1);
    expect(await page.getByTestId('hit-rate').textContent()).toMatch(/\d+\.\d %/);
    await shot('cache-1440');
    const form = page.getByRole('form', { name: 'Remove from the cache' });
    await form.getByLabel('Scope').selectOption(`vk:${keyId}`);
    await form.getByRole('button', { name: 'Remove' }).click();
    await expect
      .poll(() => form.getByRole('status').textContent())
      .toMatch(/Removed [1-9]\d* entr(y|ies) from vk:/);
    const again = await chat('Cache me');
    expect(again.headers.get('x-gw-cache')).toBe('miss');
  });

  it('edits a key by form: models per provider, limits, expiry', async () => {
    await goTo('Virtual keys');
    await page.getByRole('button', { name: 'Edit console-key' }).click();
    const form = page.getByRole('form', { name: 'Edit console-key' });
    await form.getByLabel('Models of openai (comma-separated)').fill('gpt-4o-mini, gpt-4o');
    await form.getByLabel('Requests per minute').fill('100');
    await form.getByLabel('Tokens per minute').fill('50000');
    await form.getByLabel('Expires at').fill('2099-01-01T12:00');
    await form.getByRole('button', { name: 'Save key' }).click();
    await form.waitFor({ state: 'detached' });
    const key = await admin<{
      provider_configs: { provider: string; allowed_models: string[] }[];
      rate_limit: { request_max_limit: number; token_max_limit: number };
      expires_at: string;
      team_id: string;
    }>('GET', `/api/governance/virtual-keys/${keyId}`);
    expect(key.body.provider_configs).toEqual([
      expect.objectContaining({ provider: 'openai', allowed_models: ['gpt-4o-mini', 'gpt-4o'] }),
    ]);
    expect(key.body.rate_limit).toMatchObject({ request_max_limit: 100, token_max_limit: 50000 });
    expect(key.body.expires_at).toMatch(/^2099-01-01T/);
    expect(key.body.team_id).toBe(teamId);
  });

  it('shows the API’s 400 for a budget too large next to the field', async () => {
    await page.getByRole('button', { name: 'Budget of console-key' }).click();
    const form = page.getByRole('form', { name: 'Change the budget' });
    await form.getByLabel('Max spend (USD)').fill('9000000000');
    await form.getByRole('button', { name: 'Save budget' }).click();
    await expect.poll(() => form.getByTestId('error-max_limit').textContent()).toContain('must be at most');
    expect(await form.getByLabel('Max spend (USD)').getAttribute('aria-invalid')).toBe('true');
    await shot('virtual-keys-budget-error-1440');
    await form.getByRole('button', { name: 'Cancel' }).click();
  });

  it('makes a model alias by form, and shows the API refusing a duplicate name and an unknown provider', async () => {
    await goTo('Providers');
    await page.getByRole('button', { name: 'Add to Model aliases' }).click();
    let form = page.getByRole('form', { name: 'New model alias' });
    await form.getByLabel('Alias name').fill('fast');
    await form.getByLabel('Targets').fill('openai/gpt-4o-mini*2');
    await form.getByRole('button', { name: 'Create alias' }).click();
    await page.getByRole('cell', { name: 'openai/gpt-4o-mini (×2)' }).waitFor();

    // The advanced tab sends what it is given: the API itself refuses it.
    for (const [body, refusal] of [
      [{ name: 'fast', targets: [{ model: 'openai/gpt-4o' }] }, "a model alias named 'fast' already exists"],
      [
        { name: 'ghost', targets: [{ model: 'nope/gpt-4o' }] },
        "targets[0].model: provider 'nope' does not exist",
      ],
    ] as const) {
      await page.getByRole('button', { name: 'Add to Model aliases' }).click();
      await page.getByRole('tab', { name: 'Advanced (JSON)' }).click();
      form = page.getByRole('form', { name: 'New in Model aliases' });
      await form.getByLabel('Body (JSON)').fill(JSON.stringify(body));
      await form.getByRole('button', { name: 'Create' }).click();
      await expect.poll(() => form.getByRole('alert').textContent()).toContain(refusal);
      await form.getByRole('button', { name: 'Cancel' }).click();
    }
    const aliases = await admin<{ name: string }[]>('GET', '/api/governance/model-aliases');
    expect(aliases.body.map((alias) => alias.name)).toEqual(['fast']);
  });

  it('builds a guardrail rule for one key and tests a text against it through the gateway', async () => {
    await goTo('Guardrails');
    await page.getByRole('button', { name: 'Add to Profiles' }).click();
    const profile = page.getByRole('form', { name: 'New guardrail profile' });
    await profile.getByLabel('Id', { exact: true }).fill('pii');
    await profile.getByRole('checkbox', { name: /^email/ }).check();
    await profile.getByRole('button', { name: 'Create profile' }).click();
    await page.getByRole('cell', { name: 'pii', exact: true }).waitFor();
    await page.getByRole('button', { name: 'Add to Rules' }).click();
    const form = page.getByRole('form', { name: 'New guardrail rule' });
    await form.getByLabel('Rule id').fill('block-email');
    await form.getByLabel('Applies to').selectOption('virtual key');
    await form.getByLabel('Which virtual key').fill('console-key');
    await form.getByLabel('Action').selectOption('BLOCK');
    await form.getByRole('group', { name: 'Check the input with' }).getByLabel('pii').check();
    await form.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('cell', { name: 'virtual_key == "console-key"' }).waitFor();
    const rule = await admin<{ condition: string; action: string; input_profiles: string[] }>(
      'GET',
      '/api/guardrails/rules/block-email',
    );
    expect(rule.body).toMatchObject({
      condition: 'virtual_key == "console-key"',
      action: 'BLOCK',
      input_profiles: ['pii'],
    });

    const test = page.getByRole('form', { name: 'Test this text' });
    await test.getByLabel('Virtual key').fill(keyValue);
    await test.getByLabel('Model').fill('openai/gpt-4o-mini');
    await test.getByLabel('Gateway address').fill(site);
    await test.getByLabel('Text').fill('Write to ada@example.com');
    const upstreamCalls = fake.requests.length;
    await test.getByRole('button', { name: 'Test' }).click();
    await expect.poll(() => test.getByTestId('guardrail-test').textContent()).toMatch(/^Refused \(4\d\d\)/);
    expect(fake.requests.length).toBe(upstreamCalls);
    await test.getByLabel('Text').fill('Nothing personal here');
    await test.getByRole('button', { name: 'Test' }).click();
    await expect.poll(() => test.getByTestId('guardrail-test').textContent()).toMatch(/^Let through \(200\)/);
    await shot('guardrails-1440');
  });

  it('adds a Slack alert channel by its own fields and sends it a test', async () => {
    await goTo('Alerts');
    await page.getByRole('button', { name: 'Add to Channels' }).click();
    const form = page.getByRole('form', { name: 'New alert channel' });
    await form.getByLabel('Type').selectOption('slack');
    expect(await form.getByLabel('Signing secret').count()).toBe(0);
    await form.getByLabel('Id').fill('ops-slack');
    await form.getByLabel('Incoming webhook URL').fill(`${slack.url}/services/T000/B000/webhook-token`);
    await form.getByRole('button', { name: 'Create channel' }).click();
    await page.getByRole('cell', { name: 'ops-slack', exact: true }).waitFor();
    const channel = await admin<{ type: string }>('GET', '/api/alerts/channels/ops-slack');
    expect(channel.body.type).toBe('slack');
    await page.getByRole('button', { name: 'Send test to ops-slack' }).click();
    await expect.poll(() => slack.requests.length).toBe(1);
    await shot('alerts-1440');
  });

  it('changes a system setting in its section, and the unpriced-model price on the pricing page', async () => {
    await goTo('System config');
    await page.getByRole('button', { name: 'Edit' }).click();
    const governance = page.getByRole('form', { name: 'Governance' });
    await governance.getByLabel('Expected completion tokens').fill('300');
    await governance.getByRole('button', { name: 'Save governance' }).click();
    await expect
      .poll(
        async () =>
          (
            await admin<{ governance: { settings: { expected_completion_tokens: number } } }>(
              'GET',
              '/api/config',
            )
          ).body.governance.settings.expected_completion_tokens,
      )
      .toBe(300);
    // The cache section is live too; the settings its schema marks restart-only say so where they are edited.
    const cache = page.getByRole('form', { name: 'Response cache' });
    await cache.getByLabel('Ttl ms').fill('120000');
    await cache.getByRole('button', { name: 'Save response cache' }).click();
    await expect
      .poll(async () => (await admin<{ cache: { ttl_ms: number } }>('GET', '/api/config')).body.cache.ttl_ms)
      .toBe(120_000);
    expect(await cache.getByText('Applies at the next start.').count()).toBe(2);
    await shot('config-sections-1440');

    await goTo('Pricing');
    const form = page.getByRole('form', { name: 'Models without a price' });
    await form.getByLabel('Input (USD per million tokens)').fill('1.5');
    await form.getByLabel('Output (USD per million tokens)').fill('6');
    await form.getByRole('button', { name: 'Save price' }).click();
    await expect
      .poll(() => page.getByTestId('unpriced-state').textContent())
      .toContain('Charged $1.50 input');
    const config = await admin<{ governance: { settings: { unpriced_model_price: unknown } } }>(
      'GET',
      '/api/config',
    );
    expect(config.body.governance.settings.unpriced_model_price).toEqual({ input: 1.5, output: 6 });
    await page.getByRole('cell', { name: 'gpt-4o-mini' }).first().waitFor();
    await shot('pricing-1440');
  });

  it('reads the vault page: no references, nothing failing', async () => {
    await goTo('Vault');
    await page.getByRole('heading', { name: 'Vault', level: 1 }).waitFor();
    // The page's status loads after its heading (a busy machine reads "Loading…" at network idle).
    await expect
      .poll(() => page.locator('main').textContent(), { timeout: 10_000 })
      .toMatch(/No secret-manager references in use|this admin process has no secret resolver/);
  });

  it('colours a failed provider on the routing health and providers pages', async () => {
    for (let failure = 0; failure < 6; failure++)
      fake.enqueue({ status: 500, json: { error: { message: 'upstream down', type: 'server_error' } } });
    for (let failure = 0; failure < 6; failure++) await chat(`fail ${failure}`);
    await goTo('Routing health');
    const state = page
      .getByRole('row', { name: /^openai\b/ })
      .first()
      .locator('.state');
    await expect.poll(() => state.textContent(), { timeout: 20_000 }).toBe('failed');
    // Styled as a failure (the danger colour), not as the body's plain text.
    const background = await state.evaluate(
      (element) =>
        (
          globalThis as unknown as { getComputedStyle: (target: unknown) => { backgroundColor: string } }
        ).getComputedStyle(element).backgroundColor,
    );
    expect(background).toBe('rgb(185, 28, 28)');
    await shot('routing-1440');
    await goTo('Providers');
    const cell = page
      .getByRole('row', { name: /openai/ })
      .first()
      .locator('.state-failed');
    await expect.poll(() => cell.textContent(), { timeout: 15_000 }).toBe('failed');
  });

  it('screenshots each page at 1440×900 and 390×844', async () => {
    const pages = [
      'Providers',
      'Virtual keys',
      'Teams & budgets',
      'Guardrails',
      'Alerts',
      'System config',
      'Playground',
      'Routing health',
      'Cache',
      'Vault',
      'Pricing',
    ];
    for (const [width, height] of [
      [1440, 900],
      [390, 844],
    ] as const) {
      await page.setViewportSize({ width, height });
      for (const label of pages) {
        if (width < 720) await page.getByRole('button', { name: 'Menu' }).click();
        await goTo(label);
        await page.waitForLoadState('networkidle');
        await shot(`page-${label.toLowerCase().replace(/\W+/g, '-')}-${width}`);
      }
    }
    await page.setViewportSize({ width: 1440, height: 900 });
    // Two full-page shots of every page (more pages each issue): a ceiling for a loaded machine, not a wait.
  }, 120_000);

  it.runIf(mode === 'cluster')('serves the same console on the admin’s own port', async () => {
    const direct = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    try {
      await signIn(direct, gateway.adminUrl, ADMIN_TOKEN);
      await direct
        .getByRole('navigation', { name: 'Pages' })
        .getByRole('link', { name: 'Routing health' })
        .click();
      await direct
        .getByRole('row', { name: /^openai\b/ })
        .first()
        .waitFor();
    } finally {
      await direct.close();
    }
  });

  it.runIf(mode === 'cluster')(
    'sends the playground’s chat from the admin’s own port straight to the ingress once that origin is allowed',
    async () => {
      const direct = await browser.newPage({ viewport: { width: 1440, height: 900 } });
      const preflight = () =>
        fetch(`${gateway.url}/v1/chat/completions`, {
          method: 'OPTIONS',
          headers: { origin: gateway.adminUrl, 'access-control-request-method': 'POST' },
        });
      try {
        await signIn(direct, gateway.adminUrl, ADMIN_TOKEN);
        await direct
          .getByRole('navigation', { name: 'Pages' })
          .getByRole('link', { name: 'Playground' })
          .click();
        const form = direct.getByRole('form', { name: 'Send a chat' });
        await form.getByLabel('Gateway address').fill(gateway.url);
        await form.getByLabel('Virtual key').fill(keyValue);
        await form.getByLabel('Model').fill('openai/gpt-4o-mini');
        // Another origin than the page's: the browser holds the call back until the ingress allows the admin's.
        await form.getByRole('button', { name: 'Send' }).click();
        await expect
          .poll(() => form.getByRole('alert').textContent())
          .toMatch(/\(CORS\).*client\.cors_allowed_origins/);

        const allowed = await admin('PUT', '/api/config', {
          client: { cors_allowed_origins: [gateway.adminUrl] },
        });
        expect(allowed.status).toBe(200);
        await expect.poll(async () => (await preflight()).status).toBe(204);
        await form.getByLabel('Message').fill('Stream me a hello across origins');
        await form.getByRole('button', { name: 'Send' }).click();
        await expect.poll(() => direct.getByTestId('answer').textContent()).toBe('Hello wörld');
        expect(await direct.getByTestId('answer-facts').textContent()).toMatch(/Cachemiss/);
        expect(await direct.getByTestId('answer-headers').textContent()).toMatch(/x-request-id: \S+/);
        expect(fake.requests.at(-1)!.body).toMatchObject({
          messages: [{ role: 'user', content: 'Stream me a hello across origins' }],
        });
      } finally {
        await direct.close();
      }
    },
  );
});
