// The console as a new operator meets it (issue 45), in headless Chromium against the embedded gateway and a
// cluster whose console is opened on the admin's own port: the snippets and the playground name the gateway's
// public address (the ingress, not the admin port), the copied curl serves, and a browser's CORS refusal is named
// as such with the setting that allows it; a refusal's log detail says only what is true and a request a fallback
// saved lists the target that failed first; a revoked token leaves at the next click, cached pages or not; a
// Viewer is offered no control the API refuses; the anonymous-admin banner stays on screen; loading the console
// asks for nothing that answers 404. Screenshots: test-artifacts/ui/operator-<mode>-*.png, 1440×900 and 390×844.
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  chatCompletion,
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
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, goTo, launchChromium, submitSignIn } from './chromium.ts';

const ADMIN_TOKEN = 'admin-token-for-the-operator';
const CONFIG: GatewayConfigInput = { client: { allow_anonymous_admin: false }, logs: { content: true } };

const MODES = [
  ['embedded', () => startEmbedded({ config: CONFIG, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    (database?: TestDatabase) =>
      startCluster({ config: CONFIG, adminToken: ADMIN_TOKEN, env: { GW_LOGS_DATABASE_URL: database!.url } }),
  ],
] as const;

const run = promisify(execFile);

/** A snippet's curl as the shell would run it: the URL, each -H and the -d body. */
async function runCurl(snippet: string): Promise<{ status: number; body: string }> {
  const url = /curl (\S+)/.exec(snippet)![1]!;
  const headers = [...snippet.matchAll(/-H "([^"]+)"/g)].flatMap((match) => ['-H', match[1]!]);
  const body = /-d '([^']+)'/.exec(snippet)![1]!;
  const { stdout } = await run('curl', ['-sS', '-w', '\n%{http_code}', url, ...headers, '-d', body]);
  const lines = stdout.trimEnd().split('\n');
  return { status: Number(lines.pop()), body: lines.join('\n') };
}

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

describe.each(MODES)('the console as a new operator meets it, in Chromium (%s)', (mode, start) => {
  let fake: FakeUpstream;
  let gateway: LaunchedGateway;
  let database: TestDatabase | undefined;
  /** Where the operator opens the console: the admin's own port (in a cluster it serves no `/v1`). */
  let site = '';
  let page: Page;
  let keyValue = '';

  const admin = async <T = unknown>(method: string, path: string, body?: unknown) => {
    const answer = await fetch(`${gateway.adminUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: answer.status, body: (await answer.json()) as T };
  };

  const chat = (key: string, body: Record<string, unknown>) =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'Hello' }], ...body }),
    });

  const shot = async (target: Page, name: string) => {
    await target.screenshot({ path: join(ARTIFACTS, `operator-${mode}-${name}-1440.png`), fullPage: true });
    const size = target.viewportSize()!;
    await target.setViewportSize({ width: 390, height: 844 });
    await target.screenshot({ path: join(ARTIFACTS, `operator-${mode}-${name}-390.png`), fullPage: true });
    await target.setViewportSize(size);
  };

  async function signIn(target: Page, token: string) {
    await target.goto(`${site}/ui/`);
    await submitSignIn(target, token);
  }

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    if (mode === 'cluster') database = await createTestDatabase();
    gateway = await start(database);
    site = gateway.adminUrl;
    page = await browser.newPage({ viewport: { width: 1440, height: 900 }, timezoneId: 'Europe/Berlin' });
  }, 120_000);

  afterEach(async (context) => {
    if (context.task.result?.state === 'fail' && page)
      await page
        .screenshot({
          path: join(ARTIFACTS, `operator-${mode}-failed-${context.task.name.slice(0, 30)}.png`),
        })
        .catch(() => undefined);
  });

  afterAll(async () => {
    await page?.close();
    await gateway?.close();
    await Promise.all([fake?.close(), database?.drop()]);
  });

  it('loads the console without asking for anything that answers 404 (favicon, /auth/session)', async () => {
    const missing: string[] = [];
    page.on('response', (response) => {
      if (response.status() === 404) missing.push(response.url());
    });
    await page.goto(`${site}/ui/`);
    await page.getByLabel('Admin token').waitFor();
    await page.waitForLoadState('networkidle');
    await signIn(page, ADMIN_TOKEN);
    await page.waitForLoadState('networkidle');
    expect(missing).toEqual([]);
    // Sign-in lands on Overview, which leads an empty gateway to its first served request.
    const steps = page.getByRole('region', { name: 'Getting started' });
    await expect.poll(() => steps.textContent()).toContain('Send a first request');
    await shot(page, 'landing-steps');
  });

  it('first run: the snippets name the gateway’s public address, and the copied curl is served', async () => {
    const added = await admin('POST', '/api/providers', {
      name: 'openai',
      keys: [{ id: 'key-1', value: 'sk-upstream-operator', models: ['gpt-4o-mini', 'gpt-4o'], weight: 1 }],
      network_config: { base_url: fake.url, max_retries: 0 },
    });
    expect(added.status, JSON.stringify(added.body)).toBe(201);
    // Added elsewhere than this tab: the page is read again (Overview's steps read the providers a moment ago).
    await page.reload();
    await page.getByTestId('who').waitFor();
    await goTo(page, 'Virtual keys');
    await page.getByRole('button', { name: 'Create key' }).click();
    const form = page.getByRole('form', { name: 'Create a virtual key' });
    await form.getByLabel('Name', { exact: true }).fill('operator-key');
    await form.getByLabel('Provider', { exact: true }).selectOption('openai');
    await form.getByRole('button', { name: 'Create key' }).click();
    keyValue = (await page.getByTestId('once-value').textContent()) ?? '';
    expect(keyValue).toMatch(/^sk-gw-/);
    const curl = page.getByTestId('snippet-curl');
    await curl.waitFor();
    const snippet = (await curl.textContent()) ?? '';
    // Not the admin port in a cluster: the ingress (here the same port as the console when embedded).
    expect(snippet).toContain(`${gateway.url}/v1/chat/completions`);
    expect(await page.getByTestId('snippet-javascript').textContent()).toContain(`'${gateway.url}/v1'`);
    expect(await page.getByTestId('snippet-python').textContent()).toContain(`"${gateway.url}/v1"`);
    const served = await waitFor(
      async () => {
        const answer = await runCurl(snippet);
        return answer.status === 401 ? undefined : answer;
      },
      { timeoutMs: 10_000, what: 'the new key to be known' },
    );
    expect(served.status, served.body).toBe(200);
    await page.getByRole('button', { name: 'Copy curl' }).click();
    await page.getByRole('button', { name: /^(Copied|Select and copy it)$/ }).waitFor();
    await shot(page, 'key-snippets');
  });

  it('the playground calls the public address; a CORS refusal is named, with the setting that allows it', async () => {
    await page.getByRole('link', { name: 'Try it in the playground' }).click();
    const form = page.getByRole('form', { name: 'Send a chat' });
    await expect.poll(() => form.getByLabel('Gateway address').inputValue()).toBe(gateway.url);
    await form.getByLabel('Message').fill('Stream me a hello');
    if (mode === 'cluster') {
      // The console's origin (the admin port) is not the ingress's: the browser withholds the answer.
      await form.getByRole('button', { name: 'Send' }).click();
      const alert = form.getByRole('alert');
      await expect.poll(() => alert.textContent()).toMatch(/CORS/);
      const said = (await alert.textContent()) ?? '';
      expect(said).toContain('client.cors_allowed_origins');
      expect(said).toContain(`"${gateway.adminUrl}"`);
      expect(said).not.toMatch(/did not answer/);
      await shot(page, 'playground-cors');
      // One click allows the console's origin (an Admin may change the setting).
      await form.getByRole('button', { name: `Allow ${gateway.adminUrl}` }).click();
      await form.getByTestId('cors-allowed').waitFor();
      const settings = await admin<{ client: { cors_allowed_origins: string[] } }>('GET', '/api/config');
      expect(settings.body.client.cors_allowed_origins).toEqual([gateway.adminUrl]);
      await expect
        .poll(
          async () =>
            (
              await fetch(`${gateway.url}/v1/chat/completions`, {
                method: 'OPTIONS',
                headers: { origin: gateway.adminUrl, 'access-control-request-method': 'POST' },
              })
            ).status,
        )
        .toBe(204);
    }
    await form.getByRole('button', { name: 'Send' }).click();
    await expect.poll(() => page.getByTestId('answer').textContent()).toBe('Hello wörld');
    await shot(page, 'playground');
  });

  it('the playground as a test bench: system prompt, parameters, turns, tools, the record and curl', async () => {
    await page.goto(`${site}/ui/playground`);
    const form = page.getByRole('form', { name: 'Send a chat' });
    await expect.poll(() => form.getByLabel('Gateway address').inputValue()).toBe(gateway.url);
    await form.getByLabel('Virtual key').fill(keyValue);
    await form.getByLabel('Model').fill('openai/gpt-4o-mini');
    await form.getByLabel('System prompt').fill('Answer briefly.');
    await form.getByLabel('Stream the answer').uncheck();
    await form.getByText('Parameters and tools').click();
    await form.getByLabel('Temperature').fill('0.2');
    await form.getByLabel('Max tokens').fill('50');
    await form.getByLabel('Message').fill('Hi');
    await form.getByRole('button', { name: 'Send', exact: true }).click();
    await expect.poll(() => page.getByTestId('answer').textContent()).toBe('Hello from the fake upstream');
    expect(fake.requests.at(-1)!.body).toMatchObject({
      temperature: 0.2,
      max_tokens: 50,
      messages: [
        { role: 'system', content: 'Answer briefly.' },
        { role: 'user', content: 'Hi' },
      ],
    });
    // The answer joins the conversation: the next message carries both turns.
    await form.getByRole('button', { name: 'Continue this conversation' }).click();
    await form.getByLabel('Message').fill('And again?');
    await form.getByRole('button', { name: 'Send', exact: true }).click();
    await expect
      .poll(() => fake.requests.at(-1)!.body)
      .toMatchObject({
        messages: [
          { role: 'system', content: 'Answer briefly.' },
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: 'Hello from the fake upstream' },
          { role: 'user', content: 'And again?' },
        ],
      });
    await shot(page, 'playground-turns');
    // Tools: the ones the model asks for are shown with the answer.
    await form.getByRole('button', { name: 'New conversation' }).click();
    fake.enqueue({
      json: chatCompletion({
        content: null,
        toolCalls: [
          {
            id: 'call_1',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
          },
        ],
      }),
    });
    await form.getByLabel('Tools (JSON)').fill(
      JSON.stringify([
        {
          type: 'function',
          function: { name: 'get_weather', parameters: { type: 'object', properties: {} } },
        },
      ]),
    );
    await form.getByLabel('Message').fill('Weather in Paris?');
    await form.getByRole('button', { name: 'Send', exact: true }).click();
    await expect.poll(() => page.getByTestId('answer-tool-calls').textContent()).toContain('get_weather');
    expect(await page.getByTestId('answer-tool-calls').textContent()).toContain('{"city":"Paris"}');
    expect((fake.requests.at(-1)!.body as { tools: unknown[] }).tools).toHaveLength(1);
    await page.getByRole('button', { name: 'Copy as curl' }).click();
    await page.getByRole('button', { name: /^(Copied|Select and copy it)$/ }).waitFor();
    await shot(page, 'playground-tools');
    // Once its record is written, the answer says how it was routed and what it cost.
    await expect
      .poll(
        () =>
          page
            .getByTestId('answer-routing')
            .textContent()
            .catch(() => ''),
        { timeout: 15_000 },
      )
      .toContain('no rule matched, weighted');
    expect(await page.getByTestId('answer-cost').textContent()).toMatch(/^\$\d/);
    // The request id opens its log record.
    const id = (await page.getByTestId('answer-record').textContent()) ?? '';
    await expect
      .poll(async () => (await admin('GET', `/api/logs/${id}`)).status, { timeout: 15_000 })
      .toBe(200);
    await page.getByTestId('answer-record').click();
    await page.getByRole('heading', { name: 'Routing' }).waitFor();
    expect(await page.locator('main').textContent()).toContain(id);
  });

  it('Overview drops its getting-started steps once the gateway has served a request', async () => {
    await page.goto(`${site}/ui/`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await expect
      .poll(
        async () => {
          await page.reload();
          await page.getByRole('heading', { name: 'Overview' }).waitFor();
          await page.waitForLoadState('networkidle');
          return page.getByRole('region', { name: 'Getting started' }).count();
        },
        { timeout: 20_000 },
      )
      .toBe(0);
  });

  it('a governance refusal’s detail says it was refused before routing, and nothing about opting out', async () => {
    const created = await admin<{ value: string; id: string }>('POST', '/api/governance/virtual-keys', {
      name: 'narrow-key',
      provider_configs: [{ provider: 'openai', allowed_models: ['gpt-4o-mini'] }],
    });
    expect(created.status).toBe(201);
    const refused = await waitFor(
      async () => {
        const answer = await chat(created.body.value, { model: 'openai/gpt-4o' });
        return answer.status === 401 ? undefined : answer;
      },
      { timeoutMs: 10_000, what: 'the new key to be known' },
    );
    expect(refused.status, await refused.clone().text()).toBe(403);
    const id = refused.headers.get('x-request-id')!;
    await expect
      .poll(async () => (await admin('GET', `/api/logs/${id}`)).status, { timeout: 15_000 })
      .toBe(200);
    await page.goto(`${site}/ui/logs/${id}`);
    await page.getByTestId('failure').waitFor();
    const main = (await page.locator('main').textContent()) ?? '';
    expect(main).toContain('model_not_allowed');
    expect(main).toContain('refused before routing');
    expect(main).not.toContain('Last tried');
    expect(main).not.toContain('opts out');
    await shot(page, 'refused-detail');
  });

  it('a request a fallback saved lists the target that failed before it, in the record and its detail', async () => {
    fake.enqueue({
      status: 500,
      json: { error: { message: 'the first target is down', type: 'server_error' } },
    });
    const saved = await chat(keyValue, { model: 'openai/gpt-4o', fallbacks: ['openai/gpt-4o-mini'] });
    expect(saved.status, await saved.clone().text()).toBe(200);
    const id = saved.headers.get('x-request-id')!;
    const record = await waitFor(
      async () => {
        const answer = await admin<{ attempts: unknown[] | null; fallback_index: number }>(
          'GET',
          `/api/logs/${id}`,
        );
        return answer.status === 200 ? answer.body : undefined;
      },
      { timeoutMs: 15_000, what: 'the record to be stored' },
    );
    expect(record.fallback_index).toBe(1);
    expect(record.attempts).toEqual([
      expect.objectContaining({
        provider: 'openai',
        model: 'gpt-4o',
        status: 500,
        error_type: 'upstream_error',
      }),
    ]);
    await page.goto(`${site}/ui/logs/${id}`);
    const tried = page.getByRole('table', { name: 'Targets tried' });
    await tried.waitFor();
    expect(await tried.textContent()).toMatch(
      /openai \/ gpt-4o.*500 upstream_error.*the first target is down/s,
    );
    const main = (await page.locator('main').textContent()) ?? '';
    expect(main).toMatch(/Served by.*openai \/ gpt-4o-mini/);
    expect(main).toContain('fallback 1 of the plan');
    await shot(page, 'fallback-detail');
  });

  // A new browser page, a sign-in and two pages read before the revocation: on a loaded machine more than 30 s.
  it('a revoked token leaves at the next click, even to a page whose data is cached', {
    timeout: scaled(60_000),
  }, async () => {
    const created = await admin<{ id: string; token: string }>('POST', '/api/tokens', {
      name: 'operator-revoked',
      role: 'admin',
    });
    expect(created.status).toBe(201);
    const other = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await signIn(other, created.body.token);
      await goTo(other, 'Virtual keys');
      await other.getByRole('cell', { name: 'operator-key', exact: true }).waitFor();
      await goTo(other, 'Providers');
      await other.getByRole('cell', { name: 'openai', exact: true }).first().waitFor();
      const revoked = await admin('DELETE', `/api/tokens/${encodeURIComponent(created.body.id)}`);
      expect(revoked.status).toBe(200);
      // Revocation holds at the API's next call, in both modes.
      const refused = await fetch(`${site}/api/whoami`, {
        headers: { authorization: `Bearer ${created.body.token}` },
      });
      expect(refused.status).toBe(401);
      // Back to a page read seconds ago (its data still fresh in the cache): the console asks and leaves.
      const clicked = Date.now();
      await other
        .getByRole('navigation', { name: 'Pages' })
        .getByRole('link', { name: 'Virtual keys', exact: true })
        .click();
      await other.getByTestId('session-ended').waitFor({ timeout: 3_000 });
      expect(Date.now() - clicked).toBeLessThan(3_000);
      expect(await other.getByRole('cell', { name: 'operator-key' }).count()).toBe(0);
    } finally {
      await other.close();
    }
  });

  it('opens a form with the focus on its first field and closes it with Escape', async () => {
    await goTo(page, 'Alerts');
    await page.getByRole('button', { name: 'Add to Rules' }).click();
    const form = page.getByRole('form', { name: 'New alert rule' });
    await form.waitFor();
    await expect.poll(() => page.evaluate('document.activeElement?.id')).toBe('rule-kind');
    await page.keyboard.press('Escape');
    await form.waitFor({ state: 'detached' });
  });

  it('creates an alert rule by form, as its JSON would', async () => {
    const channel = await admin('POST', '/api/alerts/channels', {
      id: 'ops-form',
      type: 'webhook',
      name: 'Ops form',
      url: 'https://example.com/hook',
      secret: 'change-me-sixteen-chars',
    });
    expect(channel.status, JSON.stringify(channel.body)).toBe(201);
    await page.reload();
    await page.getByRole('heading', { name: 'Alerts' }).waitFor();
    await page.getByRole('button', { name: 'Add to Rules' }).click();
    const form = page.getByRole('form', { name: 'New alert rule' });
    await form.getByLabel('Kind').selectOption('latency');
    await form.getByLabel('Id', { exact: true }).fill('slow');
    await form.getByLabel('Percentile').selectOption('p99');
    await form.getByLabel('Threshold').fill('2000');
    await form.getByLabel('Window').fill('10');
    await form.getByLabel('Ops form (webhook)').check();
    await form.getByLabel('Severity').selectOption('critical');
    await shot(page, 'form-alert-rule');
    await form.getByRole('button', { name: 'Create rule' }).click();
    await form.waitFor({ state: 'detached' });
    const stored = await admin('GET', '/api/alerts/rules/slow');
    expect(stored.body).toMatchObject({
      kind: 'latency',
      percentile: 'p99',
      threshold_ms: 2000,
      window_ms: 600_000,
      min_requests: 20,
      channels: ['ops-form'],
      severity: 'critical',
      cooldown_ms: 900_000,
      notify_resolved: true,
    });
  });

  it('creates a guardrail profile by form: PII as check boxes, a pattern row, keywords', async () => {
    await goTo(page, 'Guardrails');
    await page.getByRole('button', { name: 'Add to Profiles' }).click();
    const form = page.getByRole('form', { name: 'New guardrail profile' });
    await form.getByLabel('Id', { exact: true }).fill('pii-form');
    await form.getByRole('checkbox', { name: /^email/ }).check();
    await form.getByRole('checkbox', { name: /^card/ }).check();
    await form.getByRole('button', { name: 'Add a pattern' }).click();
    await form.getByLabel('Pattern 1 name').fill('ticket');
    await form.getByLabel('Pattern 1 regex').fill('TICKET-\\d+');
    await form.getByRole('checkbox', { name: /^Redact/ }).check();
    await form.getByLabel('Keywords (one a line)').fill('forbidden\nsecret plan');
    await shot(page, 'form-guardrail-profile');
    await form.getByRole('button', { name: 'Create profile' }).click();
    await form.waitFor({ state: 'detached' });
    const stored = await admin('GET', '/api/guardrails/profiles/pii-form');
    expect(stored.body).toMatchObject({
      type: 'builtin',
      enabled: true,
      pii: ['email', 'card'],
      patterns: [
        { name: 'ticket', regex: 'TICKET-\\d+', redact: true, ignore_case: false, severity: 'high' },
      ],
      keywords: ['forbidden', 'secret plan'],
    });
  });

  it('creates a custom role from the permission checklist, a user holding it, and a token for it', async () => {
    await goTo(page, 'Users & roles');
    await page.getByRole('button', { name: 'Add to Roles' }).click();
    const role = page.getByRole('form', { name: 'Create a role' });
    await role.getByLabel('Id', { exact: true }).fill('auditor');
    await role.getByLabel('Name', { exact: true }).fill('Auditor');
    expect(await role.textContent()).toContain('the audit log and its verification');
    await role.getByRole('checkbox', { name: /^audit:read/ }).check();
    await role.getByRole('checkbox', { name: /^logs:read/ }).check();
    await shot(page, 'form-role');
    await role.getByRole('button', { name: 'Create role' }).click();
    await role.waitFor({ state: 'detached' });
    // Built-in roles cannot be changed: no Edit or Delete is offered for them, the new role has both.
    await page.getByRole('button', { name: 'Edit auditor', exact: true }).waitFor();
    for (const builtIn of ['admin', 'developer', 'viewer'])
      expect(await page.getByRole('button', { name: `Edit ${builtIn}`, exact: true }).count()).toBe(0);
    const storedRole = await admin<{ permissions: string[]; team_scoped: boolean }>(
      'GET',
      '/api/roles/auditor',
    );
    expect(storedRole.body.permissions.sort()).toEqual(['audit:read', 'logs:read']);
    expect(storedRole.body.team_scoped).toBe(false);

    await page.getByRole('button', { name: 'Add to Users' }).click();
    const user = page.getByRole('form', { name: 'Add a user' });
    await user.getByLabel('Email').fill('ada@example.com');
    await user.getByLabel('Name', { exact: true }).fill('Ada');
    await user.getByRole('checkbox', { name: /^Auditor/ }).check();
    await user.getByRole('checkbox', { name: /^Viewer/ }).uncheck();
    await shot(page, 'form-user');
    await user.getByRole('button', { name: 'Add user' }).click();
    await user.waitFor({ state: 'detached' });
    const users = await admin<{ email: string; roles: string[]; active: boolean }[]>('GET', '/api/users');
    expect(users.body.find((entry) => entry.email === 'ada@example.com')).toMatchObject({
      roles: ['auditor'],
      active: true,
    });

    await page.getByRole('button', { name: 'Add to API tokens' }).click();
    const token = page.getByRole('form', { name: 'Create an API token' });
    await token.getByLabel('Name', { exact: true }).fill('ci-form');
    await token.getByLabel('Role').selectOption('auditor');
    await token.getByLabel('Expires after').selectOption({ label: '7 days' });
    await shot(page, 'form-token');
    await token.getByRole('button', { name: 'Create token' }).click();
    const value = (await page.getByTestId('once-value').textContent()) ?? '';
    const tokens = await admin<{ name: string; role: string; expires_at: string }[]>('GET', '/api/tokens');
    const made = tokens.body.find((entry) => entry.name === 'ci-form')!;
    expect(made.role).toBe('auditor');
    const days = (Date.parse(made.expires_at) - Date.now()) / 86_400_000;
    expect(days).toBeGreaterThan(6.9);
    expect(days).toBeLessThan(7.1);
    const who = await fetch(`${site}/api/whoami`, { headers: { authorization: `Bearer ${value}` } });
    expect(((await who.json()) as { role: string }).role).toBe('auditor');
  });

  it('adds a custom OpenAI-compatible provider by form, and it serves', async () => {
    await goTo(page, 'Providers');
    await page.getByRole('button', { name: 'Add provider' }).click();
    const form = page.getByRole('form', { name: 'Add a provider' });
    await form.getByLabel('Kind').selectOption('custom');
    await form.getByLabel('Name', { exact: true }).fill('local-llm');
    await form.getByLabel('Speaks').selectOption('openai');
    await form.getByRole('checkbox', { name: /^chat$/ }).check();
    await form.getByRole('checkbox', { name: /^chat stream$/ }).check();
    await form.getByLabel('Key value').fill('sk-local');
    await form.getByLabel('Models (comma-separated)').fill('llama-3');
    await form.getByLabel('Base URL').fill(fake.url);
    await form.getByLabel('Retries').fill('0');
    await shot(page, 'form-custom-provider');
    await form.getByRole('button', { name: 'Add provider' }).click();
    await form.waitFor({ state: 'detached' });
    const stored = await admin<{ custom_provider_config: unknown }>('GET', '/api/providers/local-llm');
    expect(stored.body.custom_provider_config).toEqual({
      base_provider: 'openai',
      allowed_operations: ['chat', 'chat_stream'],
    });
    const key = await admin<{ value: string }>('POST', '/api/governance/virtual-keys', {
      name: 'local-key',
      provider_configs: [{ provider: 'local-llm', allowed_models: ['*'] }],
    });
    const served = await waitFor(
      async () => {
        const answer = await chat(key.body.value, { model: 'local-llm/llama-3' });
        return answer.status === 401 ? undefined : answer;
      },
      { timeoutMs: 10_000, what: 'the new key to be known' },
    );
    expect(served.status, await served.clone().text()).toBe(200);
    expect(fake.requests.at(-1)!.headers.authorization).toBe('Bearer sk-local');
  });

  it('edits settings with their declared description, unit, default and when they apply; public_url leads the playground', async () => {
    await goTo(page, 'System config');
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    const client = page.getByRole('form', { name: 'Client' });
    await client.getByLabel('Max fallbacks').waitFor();
    const text = (await client.textContent()) ?? '';
    expect(text).toContain('Most fallbacks one request may name');
    expect(text).toContain('Default: 5.');
    expect(text).toContain('targets');
    expect(text).toContain('Applies to the next request.');
    const mcp = page.getByRole('form', { name: 'MCP tool calls' });
    expect(await mcp.textContent()).toMatch(/Most time one tool call may take.*Applies at the next start\./);
    const cache = page.getByRole('form', { name: 'Response cache' });
    expect(await cache.getByRole('checkbox', { name: 'exact' }).isChecked()).toBe(true);
    await shot(page, 'form-settings');
    await client.getByLabel('Public url').fill('http://gw.example.test:8080');
    await client.getByRole('button', { name: 'Save client' }).click();
    await expect
      .poll(
        async () =>
          (await admin<{ client: { public_url?: string } }>('GET', '/api/config')).body.client.public_url,
      )
      .toBe('http://gw.example.test:8080');
    await page.goto(`${site}/ui/playground`);
    const form = page.getByRole('form', { name: 'Send a chat' });
    await expect
      .poll(() => form.getByLabel('Gateway address').inputValue())
      .toBe('http://gw.example.test:8080');
    expect(await form.textContent()).toContain('client.public_url in System config');
    // Emptied, the setting is unset again (sent as null), and the address is the deployment's once more.
    await page.goto(`${site}/ui/config`);
    await page.getByRole('button', { name: 'Edit', exact: true }).click();
    await page.getByRole('form', { name: 'Client' }).getByLabel('Public url').fill('');
    await page.getByRole('form', { name: 'Client' }).getByRole('button', { name: 'Save client' }).click();
    await expect
      .poll(async () => 'public_url' in (await admin<{ client: object }>('GET', '/api/config')).body.client)
      .toBe(false);
    await page.goto(`${site}/ui/playground`);
    await expect
      .poll(() => page.getByRole('form', { name: 'Send a chat' }).getByLabel('Gateway address').inputValue())
      .toBe(gateway.url);
  });

  it('finds a settings change in the audit log by its filters, and shows the fields it changed', async () => {
    await goTo(page, 'Audit log');
    const filters = page.getByRole('form', { name: 'Audit filters' });
    await filters.getByLabel('Action').selectOption('update');
    await filters.getByLabel('Target starts with').fill('PUT /api/config');
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    const rows = page.getByRole('table', { name: 'Audit records' }).getByRole('row');
    // A record is stored as the change answers; the filters are applied again until the table shows it.
    await expect
      .poll(
        async () => {
          await filters.getByRole('button', { name: 'Apply filters' }).click();
          await page.waitForLoadState('networkidle');
          return (await rows.allTextContents()).filter((row) => row.includes('PUT /api/config')).length;
        },
        { timeout: 15_000 },
      )
      // public_url set, then unset: the newest first.
      .toBeGreaterThanOrEqual(2);
    for (const row of (await rows.allTextContents()).slice(1)) expect(row).toContain('PUT /api/config');
    await rows
      .nth(1)
      .getByRole('button', { name: /^Before and after/ })
      .click();
    const diff = page.getByTestId('audit-diff');
    await diff.waitFor();
    // The newest: public_url unset again.
    expect(await diff.textContent()).toMatch(/client\.public_url\s*http:\/\/gw\.example\.test:8080\s*—/);
    expect(await diff.textContent()).not.toContain('client.max_fallbacks');
    await shot(page, 'audit-diff');
  });

  it('follows the system’s dark preference, and keeps a chosen theme', async () => {
    const theme = () => page.evaluate('document.documentElement.dataset.theme');
    const background = () => page.evaluate('getComputedStyle(document.body).backgroundColor');
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(`${site}/ui/`);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(await theme()).toBe('dark');
    await page.waitForLoadState('networkidle');
    await shot(page, 'dark-overview');
    await page.goto(`${site}/ui/logs`);
    await page.getByRole('heading', { name: 'Logs' }).waitFor();
    await page.waitForLoadState('networkidle');
    await shot(page, 'dark-logs');
    await page.emulateMedia({ colorScheme: 'light' });
    await expect.poll(theme).toBe('light');
    await page.getByLabel('Theme').selectOption('dark');
    await expect.poll(theme).toBe('dark');
    expect(await background()).not.toBe('rgb(255, 255, 255)');
    await page.reload();
    await page.getByRole('heading', { name: 'Logs' }).waitFor();
    expect(await theme()).toBe('dark');
    await page.getByLabel('Theme').selectOption('system');
    await expect.poll(theme).toBe('light');
  });

  it('a Viewer is offered no control the API would refuse, on any page', async () => {
    const created = await admin<{ token: string }>('POST', '/api/tokens', {
      name: 'operator-viewer',
      role: 'viewer',
    });
    expect(created.status).toBe(201);
    // Something on every page a Viewer could be offered to change.
    for (const [path, body] of [
      [
        '/api/governance/teams',
        { name: 'operator-team', budgets: [{ max_limit: 10, reset_duration: '1M' }] },
      ],
      ['/api/governance/customers', { name: 'operator-customer' }],
      [
        '/api/governance/model-aliases',
        { name: 'fast', targets: [{ model: 'openai/gpt-4o-mini', weight: 1 }] },
      ],
      [
        '/api/alerts/channels',
        {
          id: 'ops',
          type: 'webhook',
          name: 'Ops',
          url: 'https://example.com/hook',
          secret: 'change-me-sixteen-chars',
        },
      ],
      ['/api/guardrails/profiles', { id: 'pii', type: 'builtin', pii: ['email'] }],
    ] as const) {
      const made = await admin('POST', path, body);
      expect(made.status, `${path}: ${JSON.stringify(made.body)}`).toBe(201);
    }
    const viewer = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await signIn(viewer, created.body.token);
      const labels = await viewer
        .getByRole('navigation', { name: 'Pages' })
        .getByRole('link')
        .allTextContents();
      const offered: string[] = [];
      for (const label of labels) {
        await goTo(viewer, label);
        await viewer.waitForLoadState('networkidle');
        const buttons = await viewer.locator('main').getByRole('button').allTextContents();
        for (const name of buttons)
          if (
            /^(Save|Add|Edit|Delete|Create|Remove|Rotate|Revoke|Set|Clear|Reconnect|Refresh|Budget)\b/.test(
              name,
            )
          )
            offered.push(`${label}: ${name}`);
      }
      expect(offered).toEqual([]);
    } finally {
      await viewer.close();
    }
  }, 120_000);

  it('a Developer is not offered stdio MCP clients, which the API keeps for Admin', async () => {
    const user = await admin<{ id: string }>('POST', '/api/users', {
      email: 'dev@example.com',
      name: 'Dev',
      roles: ['developer'],
    });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const token = await admin<{ token: string }>('POST', '/api/tokens', {
      name: 'operator-developer',
      role: 'developer',
      user_id: user.body.id,
    });
    expect(token.status, JSON.stringify(token.body)).toBe(201);
    const developer = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await signIn(developer, token.body.token);
      await goTo(developer, 'MCP clients');
      await developer.getByRole('button', { name: 'Add MCP client' }).click();
      const form = developer.getByRole('form', { name: 'Add an MCP client' });
      const types = await form.getByLabel('Connection type').locator('option').allTextContents();
      expect(types).toEqual(['http', 'sse']);
      expect(await form.getByLabel('Command (stdio)').count()).toBe(0);
    } finally {
      await developer.close();
    }
  });

  it('keeps the anonymous-admin banner on screen on a long page', async () => {
    expect((await admin('PUT', '/api/config', { client: { allow_anonymous_admin: true } })).status).toBe(200);
    try {
      await page.goto(`${site}/ui/config`);
      const banner = page.getByTestId('anonymous-admin');
      await banner.waitFor();
      await page.getByRole('heading', { name: 'System config' }).waitFor();
      // A short window: the settings run far below it.
      await page.setViewportSize({ width: 1440, height: 400 });
      await page.evaluate('window.scrollTo(0, document.body.scrollHeight)');
      await expect.poll(() => page.evaluate('window.scrollY')).toBeGreaterThan(200);
      const box = await banner.boundingBox();
      expect(box!.y).toBeGreaterThanOrEqual(0);
      expect(box!.y).toBeLessThan(50);
      await page.screenshot({ path: join(ARTIFACTS, `operator-${mode}-sticky-banner-1440.png`) });
    } finally {
      await page.setViewportSize({ width: 1440, height: 900 });
      await admin('PUT', '/api/config', { client: { allow_anonymous_admin: false } });
    }
  });
});
