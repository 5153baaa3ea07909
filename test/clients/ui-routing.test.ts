// The console's routing rules (issue 40) in headless Chromium, against the embedded gateway and a cluster: an Admin
// makes rules by form (a CEL expression that does not compile refused under its field, with its line and column;
// a team rule without its team refused under the scope id), reorders them (priorities rewritten), turns one off
// and on, dry-runs described requests (the rule that matched, the one that failed to evaluate, candidates and
// targets), finds a real request's decision on its log record, and sets strategies on a key and an alias and
// metadata on a key and a team; a Viewer reads the rules and dry-runs without a write button; a Developer has no page.
// Screenshots go to test-artifacts/ui/.
import { join } from 'node:path';
import {
  type FakeOpenAi,
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { createTestDatabase } from '@gw/testkit/postgres';
import type { Browser, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ARTIFACTS, launchChromium } from './chromium.ts';

const ADMIN_TOKEN = 'admin-token-for-the-routing-console';
/** Long enough that gw's estimate (four characters a token) passes the rule's `tokens > 100`. */
const LONG_PROMPT = 'Summarise the quarterly report in three sentences. '.repeat(20);

const configFor = (upstream: string): GatewayConfigInput => ({
  client: { allow_anonymous_admin: false },
  logs: { content: false },
  providers: {
    openai: {
      keys: [{ id: 'main', value: 'sk-upstream-routing-console-1' }],
      network_config: { base_url: upstream, max_retries: 0 },
    },
  },
});

/** A cluster keeps request logs in PostgreSQL: each run its own database, dropped on close. */
const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    async (config: GatewayConfigInput) => {
      const database = await createTestDatabase();
      const cluster = await startCluster({
        config,
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
] as const satisfies ReadonlyArray<
  readonly [string, (config: GatewayConfigInput) => Promise<LaunchedGateway>]
>;

interface StoredRule {
  id: string;
  name: string;
  enabled: boolean;
  cel_expression: string;
  targets: { provider: string; model: string; weight: number }[];
  fallbacks: string[];
  strategy: string;
  objective?: { max_ttft_p95_ms?: number; max_latency_p95_ms?: number };
  scope: string;
  scope_id?: string;
  priority: number;
}

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
}, scaled(60_000));

afterAll(async () => {
  await browser?.close();
});

describe.each(MODES)('routing rules in the console, Chromium (%s)', (mode, start) => {
  let fake: FakeOpenAi;
  let gateway: LaunchedGateway;
  let page: Page;
  let site = '';
  let teamId = '';
  let keyId = '';
  let keyValue = '';

  const admin = async <T = unknown>(method: string, path: string, body?: unknown) => {
    const answer = await fetch(`${gateway.adminUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: answer.status, body: (await answer.json()) as T };
  };

  const rules = async () => (await admin<StoredRule[]>('GET', '/api/governance/routing-rules')).body;
  const ruleNamed = async (name: string) => (await rules()).find((rule) => rule.name === name);

  const shot = (target: Page, name: string) =>
    target.screenshot({ path: join(ARTIFACTS, `routing-${mode}-${name}.png`), fullPage: true });

  async function signIn(target: Page, token: string) {
    await target.goto(`${site}/ui/`);
    await target.getByLabel('Admin token').fill(token);
    await target.getByRole('button', { name: 'Sign in', exact: true }).click();
    await target.getByTestId('who').waitFor();
  }

  /** Opens a page by its link and waits for its title (the page it left stays shown until the next loads). */
  async function goTo(target: Page, label: string, title = label) {
    await target
      .getByRole('navigation', { name: 'Pages' })
      .getByRole('link', { name: label, exact: true })
      .click();
    await target.getByRole('heading', { level: 1, name: title }).waitFor();
  }

  /** The rows of a scope's table, in the order shown: each rule's name. */
  const shownOrder = (scope: string) =>
    page
      .getByRole('region', { name: `${scope} rules` })
      .locator('tbody tr td[data-label="Rule"] strong')
      .allTextContents();

  beforeAll(async () => {
    fake = await startFakeOpenAi();
    gateway = await start(configFor(fake.url));
    site = gateway.adminUrl;
    const team = await admin<{ id: string }>('POST', '/api/governance/teams', { name: 'Platform' });
    expect(team.status).toBe(201);
    teamId = team.body.id;
    const key = await admin<{ id: string; value: string }>('POST', '/api/governance/virtual-keys', {
      name: 'routing-key',
      team_id: teamId,
      provider_configs: [{ provider: 'openai', allowed_models: ['*'] }],
    });
    expect(key.status).toBe(201);
    keyId = key.body.id;
    keyValue = key.body.value;
    page = await browser.newPage({ viewport: { width: 1440, height: 900 }, timezoneId: 'Europe/Berlin' });
    page.on('dialog', (dialog) => void dialog.accept());
  }, scaled(120_000));

  // A failed case leaves the page it failed on, to see why.
  afterEach(async (context) => {
    if (context.task.result?.state === 'fail' && page)
      await shot(page, `failed-${context.task.name.slice(0, 40).replace(/\W+/g, '-')}`).catch(
        () => undefined,
      );
  });

  afterAll(async () => {
    await page?.close();
    await gateway?.close();
    await fake?.close();
  });

  it('lists no rules yet, one table per scope in the order they are evaluated', async () => {
    await signIn(page, ADMIN_TOKEN);
    await goTo(page, 'Routing rules');
    // The tables appear once the rules are read (the dry run's panel is there before them).
    await page.getByText('No global rules.').waitFor();
    const headings = await page.getByRole('heading', { level: 2 }).allTextContents();
    expect(headings.slice(0, 4)).toEqual([
      'Virtual key rules',
      'Team rules',
      'Customer rules',
      'Global rules',
    ]);
  });

  it('makes a rule by form, showing the compiler’s line and column under an expression that does not compile', async () => {
    await page.getByRole('button', { name: 'Add rule' }).click();
    const form = page.getByRole('form', { name: 'New routing rule' });
    await form.getByLabel('Name', { exact: true }).fill('long prompts');
    await form.getByLabel('Description').fill('large model for large prompts');
    await form.getByLabel('CEL expression').fill('tokens >');
    await form.getByLabel('Target provider 1').fill('openai');
    await form.getByLabel('Target model 1').fill('gpt-4o');
    await form.getByLabel('Target weight 1').fill('2');
    await form.getByRole('button', { name: 'Add fallback' }).click();
    await form.getByLabel('Fallback 1').fill('openai/gpt-4o-mini');
    await form.getByLabel('Strategy').selectOption('lowest_cost');
    await form.getByLabel('Objective: max time to first token p95 (ms)').fill('2000');
    await form.getByRole('button', { name: 'Create rule' }).click();
    const error = form.getByTestId('error-cel_expression');
    await expect.poll(() => error.textContent()).toMatch(/^cel_expression: .*\(line 1, column \d+\)/);
    expect(await form.getByLabel('CEL expression').getAttribute('aria-invalid')).toBe('true');
    expect(await rules()).toEqual([]);
    await shot(page, 'cel-error');

    await form.getByLabel('CEL expression').fill('tokens > 100');
    await form.getByRole('button', { name: 'Create rule' }).click();
    await form.waitFor({ state: 'detached' });
    await page
      .getByRole('region', { name: 'Global rules' })
      .getByRole('row', { name: /long prompts/ })
      .waitFor();
    expect(await ruleNamed('long prompts')).toMatchObject({
      description: 'large model for large prompts',
      enabled: true,
      cel_expression: 'tokens > 100',
      targets: [{ provider: 'openai', model: 'gpt-4o', weight: 2 }],
      fallbacks: ['openai/gpt-4o-mini'],
      strategy: 'lowest_cost',
      objective: { max_ttft_p95_ms: 2000 },
      scope: 'global',
      priority: 0,
    });
  });

  it('refuses a team rule without its team under the scope id, then makes it for the team picked', async () => {
    await page.getByRole('button', { name: 'Add rule' }).click();
    const form = page.getByRole('form', { name: 'New routing rule' });
    await form.getByLabel('Name', { exact: true }).fill('platform streams');
    await form.getByLabel('CEL expression').fill('stream');
    await form.getByLabel('Target provider 1').fill('openai');
    await form.getByLabel('Target model 1').fill('gpt-4o-mini');
    await form.getByLabel('Scope', { exact: true }).selectOption('team');
    await form.getByRole('button', { name: 'Create rule' }).click();
    await expect.poll(() => form.getByTestId('error-scope_id').textContent()).toContain('scope_id');
    await form.getByLabel('Scope id').fill(teamId);
    await form.getByRole('button', { name: 'Create rule' }).click();
    await form.waitFor({ state: 'detached' });
    const row = page
      .getByRole('region', { name: 'Team rules' })
      .getByRole('row', { name: /platform streams/ });
    await expect.poll(() => row.textContent()).toContain(`Platform (${teamId})`);
    expect(await ruleNamed('platform streams')).toMatchObject({
      scope: 'team',
      scope_id: teamId,
      strategy: 'weighted',
    });
  });

  it('moves a rule up (priorities rewritten), and turns one off and on again', async () => {
    await page.getByRole('button', { name: 'Add rule' }).click();
    const form = page.getByRole('form', { name: 'New routing rule' });
    await form.getByLabel('Name', { exact: true }).fill('gold tier');
    await form.getByLabel('CEL expression').fill('headers["x-tier"] == "gold"');
    await form.getByLabel('Target provider 1').fill('openai');
    await form.getByLabel('Target model 1').fill('gpt-4o-mini');
    await form.getByLabel('Priority').fill('1');
    await form.getByRole('button', { name: 'Create rule' }).click();
    await form.waitFor({ state: 'detached' });
    await expect.poll(() => shownOrder('Global')).toEqual(['long prompts', 'gold tier']);
    expect(await page.getByRole('button', { name: 'Up long prompts' }).isDisabled()).toBe(true);

    await page.getByRole('button', { name: 'Up gold tier' }).click();
    await expect.poll(() => shownOrder('Global')).toEqual(['gold tier', 'long prompts']);
    expect(await ruleNamed('gold tier')).toMatchObject({ priority: 0 });
    expect(await ruleNamed('long prompts')).toMatchObject({ priority: 1 });

    const toggle = page.getByRole('checkbox', { name: 'Enabled: long prompts' });
    // The box shows the stored state: it changes once the API has the change.
    await toggle.click();
    await expect.poll(() => toggle.isChecked()).toBe(false);
    expect(await ruleNamed('long prompts')).toMatchObject({ enabled: false });
    await toggle.click();
    await expect.poll(() => toggle.isChecked()).toBe(true);
    expect(await ruleNamed('long prompts')).toMatchObject({ enabled: true });
    await shot(page, 'rules-1440');
    await page.setViewportSize({ width: 390, height: 844 });
    await shot(page, 'rules-390');
    await page.setViewportSize({ width: 1440, height: 900 });
  });

  it('edits a rule by form (a PUT of every field)', async () => {
    await page.getByRole('button', { name: 'Edit long prompts' }).click();
    const form = page.getByRole('form', { name: 'Edit rule long prompts' });
    expect(await form.getByLabel('Target model 1').inputValue()).toBe('gpt-4o');
    expect(await form.getByLabel('Fallback 1').inputValue()).toBe('openai/gpt-4o-mini');
    await form.getByLabel('Objective: max latency p95 (ms)').fill('9000');
    await form.getByRole('button', { name: 'Save rule' }).click();
    await form.waitFor({ state: 'detached' });
    expect(await ruleNamed('long prompts')).toMatchObject({
      targets: [{ provider: 'openai', model: 'gpt-4o', weight: 2 }],
      objective: { max_ttft_p95_ms: 2000, max_latency_p95_ms: 9000 },
      priority: 1,
    });
  });

  it('dry-runs a request: the rule that matched, the one that failed to evaluate, candidates and targets', async () => {
    const sent = fake.requests.length;
    const form = page.getByRole('form', { name: 'Describe a request' });
    await form.getByLabel('Model').fill('openai/gpt-4o-mini');
    await expect
      .poll(() => form.getByLabel('Virtual key').locator('option').allTextContents())
      .toContain('routing-key');
    await form.getByLabel('Virtual key').selectOption({ label: 'routing-key' });
    await form.getByLabel('Headers (JSON)').fill('{"x-tier": ');
    await form.getByRole('button', { name: 'Dry run' }).click();
    await expect.poll(() => form.getByTestId('error-headers').textContent()).toContain('headers: not JSON');

    await form.getByLabel('Headers (JSON)').fill('');
    await form.getByLabel('User message').fill(LONG_PROMPT);
    await form.getByRole('button', { name: 'Dry run' }).click();
    const result = page.getByTestId('dry-run-result');
    await result.waitFor();
    expect(await result.getByTestId('decision-rule').textContent()).toContain('long prompts (global,');
    expect(await result.getByTestId('decision-strategy').textContent()).toBe('lowest_cost');
    expect(await result.getByRole('table', { name: 'Candidates' }).textContent()).toContain('openai/gpt-4o');
    expect(await result.getByTestId('skipped-rules').textContent()).toMatch(
      /gold tier .*failed to evaluate: .*x-tier/,
    );
    expect(await result.getByTestId('dry-run-targets').locator('li').allTextContents()).toEqual([
      'openai/gpt-4o',
      'openai/gpt-4o-mini',
    ]);
    await shot(page, 'dry-run');

    await form.getByLabel('Headers (JSON)').fill('{"x-tier": "gold"}');
    await form.getByRole('button', { name: 'Dry run' }).click();
    await expect.poll(() => page.getByTestId('decision-rule').textContent()).toContain('gold tier');
    expect(await page.getByTestId('decision-strategy').textContent()).toBe('weighted');
    expect(await page.getByTestId('dry-run-targets').locator('li').allTextContents()).toEqual([
      'openai/gpt-4o-mini',
    ]);

    // Nothing was sent upstream.
    expect(fake.requests.length).toBe(sent);
  });

  it('shows a routed request’s decision on its log record', async () => {
    const chat = (content: string) =>
      fetch(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${keyValue}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content }] }),
      });
    // A cluster's admitting processes read rule changes within moments.
    const answer = await waitFor(
      async () => {
        const response = await chat(LONG_PROMPT);
        return response.headers.get('x-gw-routing-rule') === 'long prompts' ? response : undefined;
      },
      { timeoutMs: 10_000, what: 'the request routed by long prompts' },
    );
    expect(answer.status, await answer.clone().text()).toBe(200);
    expect(fake.requests.at(-1)!.body).toMatchObject({ model: 'gpt-4o' });

    const record = await waitFor(
      async () => {
        const logs = await admin<{ records: { id: string }[] }>(
          'GET',
          `/api/logs?routing_rule=${encodeURIComponent('long prompts')}`,
        );
        return logs.body.records[0];
      },
      { timeoutMs: 15_000, what: 'the routed request in the log' },
    );
    await page.goto(`${site}/ui/logs/${encodeURIComponent(record.id)}`);
    const routing = page.getByRole('region', { name: 'Routing' });
    await routing.getByTestId('routing-decision').waitFor();
    expect(await routing.getByTestId('decision-rule').textContent()).toContain('long prompts');
    expect(await routing.getByTestId('decision-strategy').textContent()).toBe('lowest_cost');
    expect(await routing.getByRole('table', { name: 'Candidates' }).textContent()).toContain('openai/gpt-4o');
    expect(await routing.getByTestId('skipped-rules').textContent()).toContain('gold tier');
    await shot(page, 'log-detail');
  });

  it('sets a key’s strategy, objective and metadata by form, and removes a metadata entry', async () => {
    await goTo(page, 'Virtual keys');
    await page.getByRole('button', { name: 'Edit routing-key' }).click();
    let form = page.getByRole('form', { name: 'Edit routing-key' });
    await form.getByLabel('Strategy').selectOption('least_busy');
    await form.getByLabel('Objective: max latency p95 (ms)').fill('5000');
    await form.getByRole('button', { name: 'Add metadata' }).click();
    await form.getByLabel('Metadata key 1').fill('tier');
    await form.getByLabel('Metadata value 1').fill('gold');
    await form.getByRole('button', { name: 'Add metadata' }).click();
    await form.getByLabel('Metadata key 2').fill('region');
    await form.getByLabel('Metadata value 2').fill('eu');
    await form.getByRole('button', { name: 'Save key' }).click();
    await form.waitFor({ state: 'detached' });
    const key = () =>
      admin<{ routing_strategy?: string; routing_objective?: object; metadata?: Record<string, string> }>(
        'GET',
        `/api/governance/virtual-keys/${keyId}`,
      );
    expect((await key()).body).toMatchObject({
      routing_strategy: 'least_busy',
      routing_objective: { max_latency_p95_ms: 5000 },
      metadata: { tier: 'gold', region: 'eu' },
    });

    await page.getByRole('button', { name: 'Edit routing-key' }).click();
    form = page.getByRole('form', { name: 'Edit routing-key' });
    expect(await form.getByLabel('Metadata value 2').inputValue()).toBe('eu');
    await form.getByRole('button', { name: 'Remove Metadata row 1' }).click();
    await form.getByLabel('Strategy').selectOption('');
    await form.getByLabel('Objective: max latency p95 (ms)').fill('');
    await form.getByRole('button', { name: 'Save key' }).click();
    await form.waitFor({ state: 'detached' });
    const edited = (await key()).body;
    expect(edited.metadata).toEqual({ region: 'eu' });
    expect(edited.routing_strategy).toBeUndefined();
    expect(edited.routing_objective).toBeUndefined();
  });

  it('gives a team metadata by form', async () => {
    await goTo(page, 'Teams & budgets', 'Teams, customers');
    await page.getByRole('button', { name: `Edit ${teamId}` }).click();
    const form = page.getByRole('form', { name: 'Edit Platform' });
    await form.getByRole('button', { name: 'Add metadata' }).click();
    await form.getByLabel('Metadata key 1').fill('region');
    await form.getByLabel('Metadata value 1').fill('eu');
    await form.getByRole('button', { name: 'Save', exact: true }).click();
    await form.waitFor({ state: 'detached' });
    const team = await admin<{ name: string; metadata?: Record<string, string> }>(
      'GET',
      `/api/governance/teams/${teamId}`,
    );
    expect(team.body).toMatchObject({ name: 'Platform', metadata: { region: 'eu' } });
  });

  it('makes a model alias with a strategy by form', async () => {
    await goTo(page, 'Providers');
    await page.getByRole('button', { name: 'Add to Model aliases' }).click();
    const form = page.getByRole('form', { name: 'New model alias' });
    await form.getByLabel('Alias name').fill('quick');
    await form.getByLabel('Targets').fill('openai/gpt-4o-mini, openai/gpt-4o');
    await form.getByLabel('Strategy').selectOption('lowest_latency');
    await form.getByLabel('Objective: max time to first token p95 (ms)').fill('800');
    await form.getByRole('button', { name: 'Create alias' }).click();
    await form.waitFor({ state: 'detached' });
    const aliases = await admin<{ name: string; strategy?: string; objective?: object }[]>(
      'GET',
      '/api/governance/model-aliases',
    );
    expect(aliases.body.find((alias) => alias.name === 'quick')).toMatchObject({
      strategy: 'lowest_latency',
      objective: { max_ttft_p95_ms: 800 },
    });
  });

  it('shows a Viewer the rules and the dry run without a write button; a Developer has no page', async () => {
    const viewerToken = await admin<{ token: string }>('POST', '/api/tokens', { name: 'rv', role: 'viewer' });
    const viewer = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    try {
      await signIn(viewer, viewerToken.body.token);
      await goTo(viewer, 'Routing rules');
      const global = viewer.getByRole('region', { name: 'Global rules' });
      await global.getByRole('row', { name: /gold tier/ }).waitFor();
      expect(await viewer.getByRole('button', { name: /^(Add rule|Up|Down|Edit|Delete)/ }).count()).toBe(0);
      expect(await viewer.getByRole('checkbox').count()).toBe(0);
      const form = viewer.getByRole('form', { name: 'Describe a request' });
      await form.getByLabel('Model').fill('openai/gpt-4o-mini');
      await form.getByLabel('Headers (JSON)').fill('{"x-tier": "gold"}');
      await form.getByRole('button', { name: 'Dry run' }).click();
      await expect.poll(() => viewer.getByTestId('decision-rule').textContent()).toContain('gold tier');
      await shot(viewer, 'viewer');
    } finally {
      await viewer.close();
    }

    const user = await admin<{ id: string }>('POST', '/api/users', {
      email: 'router-dev@example.com',
      name: 'Dev',
      role: 'developer',
      team_ids: [teamId],
    });
    expect(user.status).toBe(201);
    const developerToken = await admin<{ token: string }>('POST', '/api/tokens', {
      name: 'rd',
      role: 'developer',
      user_id: user.body.id,
    });
    const developer = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    try {
      await signIn(developer, developerToken.body.token);
      const nav = developer.getByRole('navigation', { name: 'Pages' });
      await nav.getByRole('link', { name: 'Virtual keys', exact: true }).waitFor();
      expect(await nav.getByRole('link', { name: 'Routing rules' }).count()).toBe(0);
    } finally {
      await developer.close();
    }
  });

  it('deletes a rule', async () => {
    await goTo(page, 'Routing rules');
    await page.getByRole('button', { name: 'Delete gold tier' }).click();
    await expect.poll(() => shownOrder('Global')).toEqual(['long prompts']);
    expect((await rules()).map((rule) => rule.name).sort()).toEqual(['long prompts', 'platform streams']);
  });
});
