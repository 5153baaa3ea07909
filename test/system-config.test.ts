// System configuration hot reload (issue 14 item 6), in both modes (the cluster with two ingress replicas):
// `GET|PUT /api/config` shows and changes client, governance and MCP settings, every process applies a change
// without a restart, a bad change is refused naming the field, a change survives a restart unless the config
// file changed since, and in embedded mode an edit of the config file applies too.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLogger, parseGatewayConfig } from '@gw/shared';
import {
  type FakeOpenAi,
  type GatewayConfigInput,
  type LaunchedGateway,
  pauseForNegativeCheck,
  startCluster,
  startEmbedded,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedGateway } from '../src/embedded-gateway.ts';
import { call, get, post } from './support/http.ts';

const ADMIN_TOKEN = 'config-admin';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };

const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config, adminToken: ADMIN_TOKEN })],
  [
    'cluster',
    (config: GatewayConfigInput) =>
      startCluster({ config, adminToken: ADMIN_TOKEN, replicas: { ingress: 2 } }),
  ],
] as const;

const chatBody = { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] };

describe.each(MODES)('system configuration (%s)', (_mode, start) => {
  let openai: FakeOpenAi;
  let gateway: LaunchedGateway;

  beforeAll(async () => {
    openai = await startFakeOpenAi();
    gateway = await start({
      providers: { openai: { keys: [{ value: 'sk-openai' }], network_config: { base_url: openai.url } } },
    });
  }, 60_000);
  afterAll(async () => {
    await gateway?.close();
    await openai?.close();
  });

  const statusesOnEveryIngress = async (body: unknown = chatBody) =>
    Promise.all(gateway.urls.map(async (url) => (await post(`${url}/v1/chat/completions`, body)).status));

  it('shows the settings in force and which of them need a restart', async () => {
    const answer = await get(`${gateway.adminUrl}/api/config`, ADMIN);
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({
      client: { enforce_virtual_keys: false, max_fallbacks: 5 },
      governance: { settings: { strict_budgets: false } },
      mcp: { agent_max_depth: 5 },
      restart_required: expect.arrayContaining(['mcp.worker_concurrency']),
    });
    expect((await get(`${gateway.adminUrl}/api/config`)).status).toBe(401);
  });

  it('applies a change on every ingress without a restart, and takes it back the same way', async () => {
    await waitFor(async () => (await statusesOnEveryIngress()).every((status) => status === 200), {
      timeoutMs: 5_000,
      what: 'every ingress serving',
    });
    const changed = await call(
      'PUT',
      `${gateway.adminUrl}/api/config`,
      { client: { enforce_virtual_keys: true } },
      ADMIN,
    );
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ client: { enforce_virtual_keys: true, max_fallbacks: 5 } });
    await waitFor(async () => (await statusesOnEveryIngress()).every((status) => status === 401), {
      timeoutMs: 3_000,
      what: 'keyless requests refused on every ingress',
    });
    await call(
      'PUT',
      `${gateway.adminUrl}/api/config`,
      { client: { enforce_virtual_keys: false, max_request_body_bytes: 200 } },
      ADMIN,
    );
    const large = { ...chatBody, messages: [{ role: 'user', content: 'x'.repeat(500) }] };
    await waitFor(async () => (await statusesOnEveryIngress(large)).every((status) => status === 413), {
      timeoutMs: 3_000,
      what: 'a body past the new limit refused on every ingress',
    });
    expect(await statusesOnEveryIngress()).toEqual(gateway.urls.map(() => 200));
    await call(
      'PUT',
      `${gateway.adminUrl}/api/config`,
      { client: { max_request_body_bytes: 10_485_760 } },
      ADMIN,
    );
  });

  it('refuses a bad change naming the field, and changes nothing', async () => {
    const cases: Array<[unknown, string]> = [
      [{ client: { max_fallbacks: -1 } }, 'client.max_fallbacks'],
      [{ client: { colour: 'red' } }, 'colour'],
      [{ governance: { settings: { strict_budgets: 'yes' } } }, 'governance.settings.strict_budgets'],
      [{ providers: {} }, 'providers'],
      [{ mcp: { agent_max_depth: 1_000 } }, 'mcp.agent_max_depth'],
    ];
    for (const [body, field] of cases) {
      const refused = await call('PUT', `${gateway.adminUrl}/api/config`, body, ADMIN);
      expect(refused.status).toBe(400);
      expect(JSON.stringify(refused.body)).toContain(field);
    }
    expect((await get(`${gateway.adminUrl}/api/config`, ADMIN)).body).toMatchObject({
      client: { max_fallbacks: 5 },
      governance: { settings: { strict_budgets: false } },
      mcp: { agent_max_depth: 5 },
    });
  });

  it('unsets an optional setting sent as null, and describes every setting for the console', async () => {
    const url = 'https://gw.example.test';
    const set = await call('PUT', `${gateway.adminUrl}/api/config`, { client: { public_url: url } }, ADMIN);
    expect(set.body).toMatchObject({ client: { public_url: url } });
    expect((await get(`${gateway.adminUrl}/api/gateway-address`, ADMIN)).body).toEqual({
      public_url: url,
      source: 'setting',
    });
    const unset = await call(
      'PUT',
      `${gateway.adminUrl}/api/config`,
      { client: { public_url: null } },
      ADMIN,
    );
    expect(unset.status).toBe(200);
    expect(unset.body.client).not.toHaveProperty('public_url');
    const fields = await get(`${gateway.adminUrl}/api/config/fields`, ADMIN);
    expect(fields.body).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ section: 'client', name: 'public_url', kind: 'text', optional: true }),
      ]),
    );
  });
});

describe('system configuration across restarts and file edits (embedded)', () => {
  let openai: FakeOpenAi;
  let directory: string;

  beforeAll(async () => {
    openai = await startFakeOpenAi();
    directory = await mkdtemp(join(tmpdir(), 'gw-config-'));
  });
  afterAll(async () => {
    await openai?.close();
    await rm(directory, { recursive: true, force: true });
  });

  const fileConfig = (client: Record<string, unknown>) => ({
    client,
    providers: { openai: { keys: [{ value: 'sk-openai' }], network_config: { base_url: openai.url } } },
  });
  const launch = async (path: string, dataDir: string) => {
    const config = parseGatewayConfig(JSON.parse(await readFile(path, 'utf8')), process.env);
    const gateway = await startEmbeddedGateway({
      config,
      logger: createLogger({ service: 'test', level: 'silent' }),
      port: 0,
      host: '127.0.0.1',
      dataDir,
      adminToken: ADMIN_TOKEN,
      environment: process.env,
      configPath: path,
    });
    return { gateway, url: `http://127.0.0.1:${gateway.port}` };
  };
  const chatStatus = async (url: string) => (await post(`${url}/v1/chat/completions`, chatBody)).status;

  it('keeps a change made through the API across a restart, until the config file changes', async () => {
    const path = join(directory, 'restart.json');
    const dataDir = join(directory, 'restart-data');
    await writeFile(path, JSON.stringify(fileConfig({ max_fallbacks: 3 })));
    let { gateway, url } = await launch(path, dataDir);
    await call('PUT', `${url}/api/config`, { client: { enforce_virtual_keys: true } }, ADMIN);
    expect(await chatStatus(url)).toBe(401);
    await gateway.close(1_000);

    ({ gateway, url } = await launch(path, dataDir));
    expect(await chatStatus(url)).toBe(401);
    await gateway.close(1_000);

    // The operator edits the file while the gateway is down: the file's settings win at the next start.
    await writeFile(path, JSON.stringify(fileConfig({ max_fallbacks: 4 })));
    ({ gateway, url } = await launch(path, dataDir));
    expect(await chatStatus(url)).toBe(200);
    expect((await get(`${url}/api/config`, ADMIN)).body).toMatchObject({
      client: { max_fallbacks: 4, enforce_virtual_keys: false },
    });
    await gateway.close(1_000);
  });

  it('applies an edit of the config file while running; an invalid edit changes nothing', async () => {
    const path = join(directory, 'watched.json');
    await writeFile(path, JSON.stringify(fileConfig({})));
    const { gateway, url } = await launch(path, join(directory, 'watched-data'));
    try {
      expect(await chatStatus(url)).toBe(200);
      await writeFile(path, JSON.stringify(fileConfig({ enforce_virtual_keys: true })));
      await waitFor(async () => (await chatStatus(url)) === 401, {
        timeoutMs: 3_000,
        what: 'the edited file applied',
      });
      await writeFile(path, JSON.stringify(fileConfig({ enforce_virtual_keys: 'sometimes' })));
      // Negative check: the invalid edit is given the time to be read, and changes nothing.
      await pauseForNegativeCheck(500);
      expect(await chatStatus(url)).toBe(401);
      await writeFile(path, JSON.stringify(fileConfig({})));
      await waitFor(async () => (await chatStatus(url)) === 200, {
        timeoutMs: 3_000,
        what: 'the edit taken back',
      });
    } finally {
      await gateway.close(1_000);
    }
  });
});
