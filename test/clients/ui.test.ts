// gw's web UI in a real browser (issues 16 and 29): headless Chromium (Debian's `chromium`, installed by .ci/run)
// driven by playwright-core against the embedded gateway and against a cluster's admin port, a fake OpenAI
// upstream behind both. The browser reaches the admin through a TCP proxy the test can stop and start again: the
// gateway not answering, mid-session. An Admin signs in, adds a provider and a virtual key through the forms,
// sends requests with that key and finds them in the logs (a failed one with its upstream's status, body and
// content; a refused one under its key), on the dashboard and in the live tail; a page whose code does not
// arrive shows a reload; a revoked token returns to sign-in with the reason; turning on anonymous admin access
// asks first and leaves a banner; a Viewer sees no edit buttons. Every page is screenshotted into
// test-artifacts/ui/<mode>/ (git-ignored), at 1280 px and 390 px wide.
import { mkdir } from 'node:fs/promises';
import { type AddressInfo, createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import {
  chatCompletion,
  type FakeOpenAi,
  type LaunchedGateway,
  type RunningMcpServer,
  scaled,
  startCluster,
  startEmbedded,
  startEverythingServer,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { createTestDatabase } from '@gw/testkit/postgres';
import type { Browser, Dialog, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, goTo, launchChromium, submitSignIn } from './chromium.ts';

const ADMIN_TOKEN = 'admin-token-for-the-web-ui';
const CONFIG = { client: { allow_anonymous_admin: false }, logs: { content: true } };

/** A cluster keeps request logs in PostgreSQL: each run its own database, dropped on close. */
const MODES = [
  ['embedded', async () => startEmbedded({ config: CONFIG, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    async () => {
      const database = await createTestDatabase();
      const cluster = await startCluster({
        config: CONFIG,
        adminToken: ADMIN_TOKEN,
        readyTimeoutMs: 60_000,
        env: { GW_LOGS_DATABASE_URL: database.url },
      }).catch(async (error: unknown) => {
        await database.drop();
        throw error;
      });
      return {
        ...cluster,
        async close() {
          await cluster.close();
          await database.drop();
        },
      };
    },
  ],
] as const satisfies ReadonlyArray<readonly [string, () => Promise<LaunchedGateway>]>;

/**
 * A TCP proxy in front of the admin port that can be stopped (its port closed, its connections cut: the browser
 * sees a gateway that is down) and started again on the same port.
 */
async function startStoppableProxy(target: URL) {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };
  const listen = async (port: number) => {
    const server = createServer((client) => {
      const upstream = createConnection({ host: target.hostname, port: Number(target.port) });
      for (const socket of [client, upstream]) {
        track(socket);
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    return server;
  };
  let server: Server | undefined = await listen(0);
  const port = (server.address() as AddressInfo).port;
  const stop = async () => {
    const closing = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => (closing ? closing.close(() => resolve()) : resolve()));
  };
  return {
    url: `http://127.0.0.1:${port}`,
    stop,
    async start() {
      server = await listen(port);
    },
    close: stop,
  };
}

describe.each(MODES)('web UI in Chromium (%s)', (mode, start) => {
  const artifacts = join(ARTIFACTS, mode);
  let fake: FakeOpenAi;
  let mcpServer: RunningMcpServer;
  let gateway: LaunchedGateway;
  let proxy: Awaited<ReturnType<typeof startStoppableProxy>>;
  let browser: Browser;
  let page: Page;
  let keyValue = '';
  let viewerToken = '';

  const shot = (target: Page, name: string) =>
    target.screenshot({ path: join(artifacts, `${name}.png`), fullPage: true });

  const admin = (path: string, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${gateway.adminUrl}${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      ...(init.body !== undefined && { body: JSON.stringify(init.body) }),
    });

  /** Opens a page from the navigation and waits until it shows (not the page it left, still on screen). */
  const signIn = submitSignIn;

  /** A chat request through the gateway; a new key may take a moment to reach every admitting process. */
  const send = (key: string, content: string) =>
    fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content }] }),
    });

  async function chat(key: string, content: string) {
    const answer = await waitFor(
      async () => {
        const response = await send(key, content);
        return response.status === 401 ? undefined : response;
      },
      { timeoutMs: 10_000, what: 'the new key to be known' },
    );
    expect(answer.status, await answer.clone().text()).toBe(200);
    return answer.json();
  }

  /** Applies the log filters until a row matching the text is listed (records reach the store within ~1 s). */
  async function findLogRow(text: RegExp) {
    await expect
      .poll(
        async () => {
          // Each try waits for the list it asked for: another click while that is on its way would cancel it.
          const listed = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/logs');
          await page.getByRole('button', { name: 'Apply filters' }).click();
          await listed;
          return page.getByRole('row', { name: text }).count();
        },
        { timeout: scaled(15_000) },
      )
      .toBeGreaterThan(0);
  }

  beforeAll(async () => {
    browser = await launchChromium();
    await mkdir(artifacts, { recursive: true });
    [fake, mcpServer] = await Promise.all([startFakeOpenAi(), startEverythingServer('streamableHttp')]);
    gateway = await start();
    proxy = await startStoppableProxy(new URL(gateway.adminUrl));
    const token = await admin('/api/tokens', { method: 'POST', body: { name: 'ui-viewer', role: 'viewer' } });
    expect(token.status).toBe(201);
    viewerToken = ((await token.json()) as { token: string }).token;
    page = await browser.newPage({ viewport: { width: 1280, height: 900 }, timezoneId: 'Europe/Berlin' });
  }, scaled(120_000));

  // A failed case leaves the page it failed on, to see why.
  afterEach(async (context) => {
    if (context.task.result?.state === 'fail' && page)
      await shot(page, `failed-${context.task.name.slice(0, 40).replace(/\W+/g, '-')}`).catch(
        () => undefined,
      );
  });

  afterAll(async () => {
    await browser?.close();
    await proxy?.close();
    await gateway?.close();
    await mcpServer?.close();
    await fake?.close();
  });

  it('sends / to the login page, refuses a wrong token with its message, signs in with the admin token', async () => {
    await page.goto(`${proxy.url}/`);
    expect(new URL(page.url()).pathname).toBe('/ui/');
    await page.getByLabel('Admin token').fill('wrong-token');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/token|unauthori/i);
    await shot(page, '00-login');
    await signIn(page, ADMIN_TOKEN);
    expect(await page.getByTestId('who').textContent()).toContain('admin');
    expect(await page.getByRole('link', { name: 'System config' }).count()).toBe(1);
  });

  it('retries a page whose code failed to arrive once; shows a reload, not a blank page, when it fails again', async () => {
    // Once: the retry loads it.
    let audits = 0;
    await page.route(/\/assets\/audit-[^/]*\.js/, (route) =>
      audits++ === 0 ? route.abort('connectionreset') : route.continue(),
    );
    await goTo(page, 'Audit log');
    await page.getByRole('heading', { name: 'Audit log', level: 1 }).waitFor();
    expect(audits).toBe(2);
    // Every time: the boundary says so, the shell stays, and a reload (the chunk back) shows the page.
    await page.route(/\/assets\/alerts-[^/]*\.js/, (route) => route.abort('connectionreset'));
    await goTo(page, 'Alerts');
    const failed = page.getByRole('alert').filter({ hasText: 'could not be loaded' });
    await failed.waitFor();
    expect(await page.getByTestId('who').isVisible()).toBe(true);
    await shot(page, '10-page-failed');
    await page.unrouteAll();
    await failed.getByRole('button', { name: 'Reload' }).click();
    await page.getByRole('heading', { name: 'Alerts', level: 1 }).waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
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

  it('finds the request in the logs by key name, opens it as a conversation with its routing and cost', async () => {
    await goTo(page, 'Logs');
    await page.getByLabel('Virtual key').selectOption({ label: 'ui-key' });
    await page.getByLabel('Model').fill('gpt-4o-mini');
    await findLogRow(/ui-key/);
    await shot(page, '03-logs');
    await page
      .getByRole('row', { name: /ui-key/ })
      .first()
      .getByRole('link')
      .click();
    const conversation = page.getByRole('list', { name: 'Conversation' });
    await conversation.waitFor();
    expect(await conversation.textContent()).toMatch(/user.*hello from the ui test.*assistant/s);
    const routing = await page.getByRole('region', { name: 'Routing' }).textContent();
    expect(routing).toContain('openai / gpt-4o-mini');
    expect(routing).toContain('the first of the plan');
    expect(await page.getByTestId('record-cost').textContent()).toMatch(/^\$0\.0000\d+/);
    expect(await page.getByTestId('record-key').textContent()).toBe('ui-key');
    await shot(page, '04-log-detail');
  });

  it("shows a request's tool calls and tool results in the conversation", async () => {
    fake.enqueue({
      json: chatCompletion({
        content: null,
        toolCalls: [
          { id: 'call_2', type: 'function', function: { name: 'forecast', arguments: '{"city":"Paris"}' } },
        ],
      }),
    });
    const answer = await fetch(`${gateway.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keyValue}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'openai/gpt-4o-mini',
        tools: [{ type: 'function', function: { name: 'weather', parameters: { type: 'object' } } }],
        messages: [
          { role: 'system', content: 'You answer about the weather.' },
          { role: 'user', content: 'What is the weather in Paris?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              {
                id: 'call_1',
                type: 'function',
                function: { name: 'weather', arguments: '{"city":"Paris"}' },
              },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: 'sunny, 21 °C' },
        ],
      }),
    });
    expect(answer.status, await answer.clone().text()).toBe(200);
    await goTo(page, 'Logs');
    await page.getByLabel('Text').fill('weather in Paris');
    await findLogRow(/ui-key/);
    await page
      .getByRole('row', { name: /ui-key/ })
      .first()
      .getByRole('link')
      .click();
    const conversation = page.getByRole('list', { name: 'Conversation' });
    await conversation.waitFor();
    expect(await conversation.textContent()).toMatch(
      /system.*You answer about the weather.*user.*weather in Paris.*assistant.*tool · result of call_1.*sunny, 21 °C.*assistant/s,
    );
    expect(await page.getByTestId('tool-call').allTextContents()).toEqual([
      'calls weather({"city":"Paris"}) · call_1',
      'calls forecast({"city":"Paris"}) · call_2',
    ]);
    await shot(page, '16-tool-calls');
  });

  it("shows a failed request's error, the upstream's status and body, and the content it sent", async () => {
    fake.enqueue({
      status: 400,
      json: {
        error: {
          message: "This model's maximum context length is 8192 tokens",
          type: 'invalid_request_error',
          code: 'context_length_exceeded',
        },
      },
    });
    const failed = await send(keyValue, 'a prompt far too long for the model');
    expect(failed.status).toBe(400);
    await goTo(page, 'Logs');
    await page.getByLabel('Status').selectOption('4xx');
    await page.getByLabel('Virtual key').selectOption({ label: 'ui-key' });
    await findLogRow(/400 upstream_error/);
    await page
      .getByRole('row', { name: /400 upstream_error/ })
      .first()
      .getByRole('link')
      .click();
    const failure = page.getByTestId('failure');
    await failure.waitFor();
    expect(await failure.textContent()).toMatch(/Failed: 400 upstream_error.*maximum context length/s);
    expect(await failure.textContent()).toMatch(/answered 400/);
    expect(await page.getByTestId('upstream-body').textContent()).toContain('context_length_exceeded');
    // Content logging is on: the request is kept and shown, never "off".
    expect(await page.getByRole('list', { name: 'Conversation' }).textContent()).toContain(
      'a prompt far too long for the model',
    );
    expect(await page.getByTestId('no-content').count()).toBe(0);
    await shot(page, '11-failed-request');
  });

  it('finds a refused request under the key and team it was refused for', async () => {
    const team = await admin('/api/governance/teams', { method: 'POST', body: { name: 'ui-team' } });
    expect(team.status, await team.clone().text()).toBe(201);
    const teamId = ((await team.json()) as { id: string }).id;
    const key = await admin('/api/governance/virtual-keys', {
      method: 'POST',
      body: {
        name: 'limited-key',
        team_id: teamId,
        provider_configs: [{ provider: 'openai', allowed_models: ['*'] }],
        rate_limit: { request_max_limit: 1, request_reset_duration: '1h' },
      },
    });
    expect(key.status, await key.clone().text()).toBe(201);
    const limited = ((await key.json()) as { value: string }).value;
    await chat(limited, 'the one request allowed');
    const refused = await send(limited, 'one too many');
    expect(refused.status).toBe(429);
    await goTo(page, 'Logs');
    await page.getByLabel('Virtual key').selectOption({ label: 'limited-key' });
    await page.getByLabel('Team').selectOption({ label: 'ui-team' });
    await page.getByLabel('Status').selectOption('4xx');
    await findLogRow(/429 request_limit_exceeded/);
    expect(await page.getByRole('row', { name: /limited-key/ }).count()).toBe(1);
    await page.getByRole('row', { name: /429/ }).first().getByRole('link').click();
    await page.getByTestId('failure').waitFor();
    expect(await page.getByTestId('record-key').textContent()).toBe('limited-key');
    expect(await page.locator('main').textContent()).toContain(`ui-team (${teamId})`);
    expect(await page.getByTestId('no-content').textContent()).toContain('Refused before routing');
    await shot(page, '12-refused-request');
  });

  it('shows a new request in the live tail (WebSocket)', async () => {
    await goTo(page, 'Logs');
    await page.getByRole('button', { name: 'Live tail' }).click();
    await expect
      .poll(() => page.getByTestId('tail-state').textContent(), { timeout: scaled(10_000) })
      .toBe('live');
    await chat(keyValue, 'tailed request');
    await page.getByRole('table', { name: 'Live requests' }).waitFor({ timeout: scaled(10_000) });
    expect(await page.getByRole('table', { name: 'Live requests' }).textContent()).toContain('ui-key');
    await shot(page, '05-live-tail');
  });

  it('says the gateway is not answering while it is down, reconnects the tail, and recovers by itself', async () => {
    // The tail is live (previous case); the gateway goes away.
    await proxy.stop();
    await expect
      .poll(() => page.getByTestId('tail-state').textContent(), { timeout: scaled(10_000) })
      .toMatch(/reconnecting in \d+ s/);
    // A page not opened yet: its code cannot arrive, and the shell says why instead of going blank.
    await goTo(page, 'Users & roles');
    await page.getByTestId('gateway-down').waitFor({ timeout: scaled(10_000) });
    await page.getByRole('alert').filter({ hasText: 'could not be loaded' }).waitFor();
    await shot(page, '13-gateway-down');
    await proxy.start();
    await page.getByTestId('gateway-down').waitFor({ state: 'detached', timeout: scaled(15_000) });
    await goTo(page, 'Logs');
    await page.getByRole('button', { name: 'Live tail' }).click();
    await expect
      .poll(() => page.getByTestId('tail-state').textContent(), { timeout: scaled(10_000) })
      .toBe('live');
    await page.getByRole('button', { name: 'Stop live tail' }).click();
  });

  it('counts requests on the dashboard: bars from 0, top keys, teams and models by spend, error types', async () => {
    // What the log holds (the requests of the cases before, and the refusals of keys still unknown a moment).
    const { records } = (await (await admin('/api/logs?limit=1000')).json()) as {
      records: { virtual_key_id: string | null }[];
    };
    expect(records.length).toBeGreaterThanOrEqual(5);
    const keyless = records.filter((record) => record.virtual_key_id === null).length;
    await goTo(page, 'Overview');
    await expect
      .poll(() => page.getByTestId('total-requests').textContent(), { timeout: scaled(10_000) })
      .toBe(String(records.length));
    // Each panel loads on its own: the totals may come before the tables.
    await expect
      .poll(() => page.locator('main').textContent(), { timeout: scaled(10_000) })
      .toContain('gpt-4o-mini');
    await expect
      .poll(() => page.getByTestId('keyless').textContent())
      .toContain(`; ${keyless} keyless request`);
    await expect
      .poll(() => page.getByRole('table', { name: 'Top virtual keys by spend' }).textContent(), {
        timeout: scaled(10_000),
      })
      .toMatch(/ui-key.*limited-key/s);
    await expect
      .poll(() => page.getByRole('table', { name: 'Top teams by spend' }).textContent(), {
        timeout: scaled(10_000),
      })
      .toContain('ui-team');
    expect(await page.getByRole('region', { name: 'Error types over time' }).locator('canvas').count()).toBe(
      1,
    );
    expect(await page.locator('figure[data-kind="bars"]').count()).toBeGreaterThanOrEqual(4);
    expect(await page.getByRole('heading', { name: 'Provider health' }).count()).toBe(1);
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
        { timeout: scaled(20_000) },
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
    // The key's budget bar reads its usage again, now against $25.
    await expect
      .poll(() => page.getByRole('meter', { name: 'Budget of ui-key' }).getAttribute('max'))
      .toBe('25');
    const stored = await admin('/api/governance/virtual-keys');
    const keys = (await stored.json()) as { name: string; budgets: { max_limit: number }[] }[];
    expect(keys.find((key) => key.name === 'ui-key')?.budgets[0]?.max_limit).toBe(25);
    await page.getByRole('button', { name: 'Usage of ui-key' }).click();
    await page.getByTestId('usage').waitFor();
    expect(await page.getByTestId('usage').textContent()).toMatch(/Budget .* of \$25\.00 per 1M.*resets/);
    await shot(page, '08-budget');
  });

  it('asks before opening the admin API to anonymous callers, and keeps a banner while it is open', async () => {
    await goTo(page, 'System config');
    // Every dialog is answered as the case says (one left open would block the page).
    const asked: string[] = [];
    let answer: 'accept' | 'dismiss' = 'dismiss';
    const onDialog = (dialog: Dialog) => {
      asked.push(dialog.message());
      void dialog[answer]();
    };
    page.on('dialog', onDialog);
    const open = async (given: 'accept' | 'dismiss') => {
      answer = given;
      await page.getByRole('button', { name: 'Edit', exact: true }).click();
      // The JSON form, behind its tab where the settings also have sections.
      const advanced = page.getByRole('tab', { name: 'Advanced (JSON)' });
      if ((await advanced.count()) > 0) await advanced.click();
      const form = page.getByRole('form', { name: 'Change system settings' });
      await form.getByLabel('Body (JSON)').fill('{"client": {"allow_anonymous_admin": true}}');
      const before = asked.length;
      await form.getByRole('button', { name: 'Save settings' }).click();
      await expect.poll(() => asked.length).toBe(before + 1);
      expect(asked.at(-1)).toContain('Allow anonymous admin access?');
      return form;
    };
    const anonymous = async () =>
      ((await (await admin('/api/config')).json()) as { client: { allow_anonymous_admin: boolean } }).client
        .allow_anonymous_admin;
    // Dismissed: nothing saved, the form says so.
    const form = await open('dismiss');
    await expect(form.getByRole('alert').textContent()).resolves.toContain('not saved');
    expect(await anonymous()).toBe(false);
    expect(await page.getByTestId('anonymous-admin').count()).toBe(0);
    await form.getByRole('button', { name: 'Cancel' }).click();
    // Confirmed: saved, and the banner stays on every page until it is turned off.
    await open('accept');
    await page.getByTestId('anonymous-admin').waitFor();
    expect(await anonymous()).toBe(true);
    await goTo(page, 'Overview');
    expect(await page.getByTestId('anonymous-admin').isVisible()).toBe(true);
    await shot(page, '14-anonymous-admin');
    page.off('dialog', onDialog);
    expect((await admin('/api/config', { method: 'PUT', body: CONFIG })).status).toBe(200);
    await page.reload();
    await page.getByTestId('who').waitFor();
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(await page.getByTestId('anonymous-admin').count()).toBe(0);
  });

  it('screenshots every page at 1280 px and on a narrow screen', { timeout: scaled(120_000) }, async () => {
    const pages = await page.getByRole('navigation', { name: 'Pages' }).getByRole('link').allTextContents();
    expect(pages.length).toBeGreaterThanOrEqual(11);
    for (const [index, label] of pages.entries()) {
      await goTo(page, label);
      await page.waitForLoadState('networkidle');
      expect(await page.getByRole('alert').count(), `${label} shows an error`).toBe(0);
      const name = `page-${String(index).padStart(2, '0')}-${label.toLowerCase().replace(/\W+/g, '-')}`;
      await shot(page, name);
      await page.setViewportSize({ width: 390, height: 844 });
      await shot(page, `${name}-narrow`);
      await page.setViewportSize({ width: 1280, height: 900 });
    }
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('button', { name: 'Menu' }).click();
    await shot(page, 'narrow-menu');
    await page.getByRole('link', { name: 'Virtual keys' }).click();
    await page.getByRole('cell', { name: 'ui-key' }).first().waitFor();
    await shot(page, 'narrow-virtual-keys');
    await page.setViewportSize({ width: 1280, height: 900 });
    // Two full-page shots of every page (more pages each issue): a ceiling for a loaded machine, not a wait.
  });

  it('a Viewer sees no edit buttons and no secrets, and is refused an edit', async () => {
    const viewer = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await viewer.goto(`${proxy.url}/ui/`);
      await signIn(viewer, viewerToken);
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

  it('returns to sign-in with the reason when the token is revoked mid-session', {
    timeout: scaled(60_000),
  }, async () => {
    const created = await admin('/api/tokens', {
      method: 'POST',
      body: { name: 'ui-revoked', role: 'admin' },
    });
    expect(created.status).toBe(201);
    const { id, token } = (await created.json()) as { id: string; token: string };
    const other = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    try {
      await other.goto(`${proxy.url}/ui/`);
      await signIn(other, token);
      await goTo(other, 'Virtual keys');
      expect((await admin(`/api/tokens/${encodeURIComponent(id)}`, { method: 'DELETE' })).status).toBe(200);
      // The next call of any page meets the 401: back to sign-in, saying why, with nothing of the session left.
      await goTo(other, 'Providers').catch(() => undefined);
      const ended = other.getByTestId('session-ended');
      await ended.waitFor({ timeout: scaled(15_000) });
      expect(await ended.textContent()).toContain('the admin token is not valid');
      expect(await other.getByLabel('Admin token').isVisible()).toBe(true);
      expect(await other.evaluate(() => sessionStorage.getItem('gw.admin-token'))).toBeNull();
      await shot(other, '15-session-ended');
    } catch (error) {
      await shot(other, 'failed-session-ended');
      throw error;
    } finally {
      await other.close();
    }
  });

  it('signs out', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByLabel('Admin token').waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('gw.admin-token'))).toBeNull();
  });
});
