// The one secret policy (docs/admin-access.md "Secret references"): no resource written through the admin API may name an
// `env.NAME` or secret-manager reference unless its caller holds `secrets:reference`, which only Admin has. A
// custom role with guardrails:read|write once stored `env.GATEWAY_ADMIN_TOKEN` as an Azure Content Safety key and
// received the token at the endpoint it chose. Admin's own references are confined to the config file's
// `admin.secret_references.allow`, and never name a variable gw itself reads (issue 42 defect 4). Both modes.
import {
  type GatewayConfigInput,
  type LaunchedGateway,
  scaled,
  startCluster,
  startEmbedded,
  startFakeWebhookReceiver,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, get, type Json } from './support/http.ts';

const ADMIN_TOKEN = 'secret-policy-bootstrap-token';
const ADMIN = { authorization: `Bearer ${ADMIN_TOKEN}` };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const STOLEN = 'env.GATEWAY_ADMIN_TOKEN';
/** A variable of the gateway's environment that Admin names in an alert channel. */
const ALERT_SECRET = 'alert-env-secret-0123456789';
/** The key of the config file's provider, a reference the allow list does not name. */
const FILE_KEY = 'sk-file-provider-0123456789';
const env = { ALERT_TEST_SECRET: ALERT_SECRET, FILE_PROVIDER_KEY: FILE_KEY };
/** What Admin may name through the API; GATEWAY_ADMIN_TOKEN is listed, and refused all the same. */
const CONFIG = {
  admin: {
    secret_references: {
      allow: ['env.HOME', 'env.ALERT_TEST_*', 'gcp-sm.projects/p/secrets/*', 'env.GATEWAY_ADMIN_TOKEN'],
    },
  },
  providers: {
    mistral: {
      keys: [{ value: 'env.FILE_PROVIDER_KEY' }],
      network_config: { base_url: 'https://mistral.example.com' },
    },
  },
};

const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config, adminToken: ADMIN_TOKEN, env })],
  [
    'cluster',
    (config: GatewayConfigInput) =>
      startCluster({ config, adminToken: ADMIN_TOKEN, env, readyTimeoutMs: 60_000 }),
  ],
] as const;

/** The refusal of the policy: 400 naming the field and the permission. */
function expectRefused(answer: { status: number; body: Json }, field: string) {
  expect(answer.status, JSON.stringify(answer.body)).toBe(400);
  expect(answer.body.error.code).toBe('secret_reference');
  expect(answer.body.error.param).toBe(field);
  expect(answer.body.error.message).toContain(`${field}:`);
  expect(answer.body.error.message).toContain('secrets:reference');
}

describe.each(MODES)('one secret policy (%s)', (_mode, start) => {
  let gateway: LaunchedGateway;
  const api = (path: string) => `${gateway.adminUrl}/api${path}`;
  /** A token of a new custom role holding exactly `permissions`. */
  const tokenOf = async (id: string, permissions: string[]) => {
    expect((await call('POST', api('/roles'), { id, permissions }, ADMIN)).status).toBe(201);
    return (await call('POST', api('/tokens'), { name: id, role: id }, ADMIN)).body.token as string;
  };
  const azure = (id: string, apiKey: string, endpoint = 'https://guard.example.com') => ({
    id,
    type: 'azure_content_safety',
    endpoint,
    api_key: apiKey,
  });

  beforeAll(async () => {
    gateway = await start(CONFIG);
  }, scaled(90_000));
  afterAll(async () => gateway?.close());

  it('refuses a guardrails:read|write role an env reference in a profile, in every field and form', async () => {
    const guard = bearer(await tokenOf('guard-editor', ['guardrails:read', 'guardrails:write']));
    expectRefused(await call('POST', api('/guardrails/profiles'), azure('steal', STOLEN), guard), 'api_key');
    const hook = { id: 'hook', type: 'webhook', url: 'https://hook.example.com', secret: 'vault.kv/gw#k' };
    expectRefused(await call('POST', api('/guardrails/profiles'), hook, guard), 'secret');
    const headers = { ...hook, secret: 'plain-secret', headers: { authorization: 'aws-sm.prod/key' } };
    expectRefused(await call('POST', api('/guardrails/profiles'), headers, guard), 'headers.authorization');
    const bedrock = {
      id: 'b',
      type: 'bedrock',
      region: 'us-east-1',
      guardrail_id: 'g',
      access_key: 'env.HOME',
    };
    expectRefused(await call('POST', api('/guardrails/profiles'), bedrock, guard), 'access_key');
    const form = {
      provider_name: 'azure_content_safety',
      policy_name: 'steal-form',
      config: { endpoint: 'https://guard.example.com', api_key: STOLEN },
    };
    expectRefused(await call('POST', api('/enterprise/guardrails/providers'), form, guard), 'config.api_key');
    // Nothing was stored.
    const listed = await get(api('/guardrails/profiles'), ADMIN);
    expect(JSON.stringify(listed.body)).not.toContain('env.');
    // A plain value is the caller's own secret: accepted, and masked in every answer, Admin's included.
    const own = await call(
      'POST',
      api('/guardrails/profiles'),
      azure('own', 'azure-key-0123456789abcdef'),
      guard,
    );
    expect(own.status).toBe(201);
    const ownHook = {
      ...hook,
      id: 'own-hook',
      secret: 'hook-secret-0123456789',
      headers: { 'x-receiver': 'receiver-cred-0123456789' },
    };
    expect((await call('POST', api('/guardrails/profiles'), ownHook, guard)).status).toBe(201);
    for (const headers of [guard, ADMIN]) {
      const shown = JSON.stringify((await get(api('/guardrails/profiles'), headers)).body);
      for (const secret of [
        'azure-key-0123456789abcdef',
        'hook-secret-0123456789',
        'receiver-cred-0123456789',
      ])
        expect(shown).not.toContain(secret);
    }
    // A read sent back keeps the stored secrets (Admin sees masks, the narrow role `[redacted]`).
    const read = (await get(api('/guardrails/profiles/own-hook'), guard)).body;
    expect((await call('PUT', api('/guardrails/profiles/own-hook'), read, guard)).status).toBe(200);
    expect((await get(api('/guardrails/profiles/own-hook'), ADMIN)).body.headers['x-receiver']).toBe(
      'rec****6789',
    );
  });

  it('lets Admin (secrets:reference) name one, and keeps it from moving for the narrow role', async () => {
    const guard = bearer(await tokenOf('guard-keeper', ['guardrails:read', 'guardrails:write']));
    const created = await call('POST', api('/guardrails/profiles'), azure('by-admin', 'env.HOME'), ADMIN);
    expect(created.status).toBe(201);
    // Written back as read (a toggle), the stored reference stays.
    const read = (await get(api('/guardrails/profiles/by-admin'), guard)).body;
    const toggled = await call(
      'PUT',
      api('/guardrails/profiles/by-admin'),
      { ...read, enabled: false },
      guard,
    );
    expect(toggled.status, JSON.stringify(toggled.body)).toBe(200);
    // Sent elsewhere, it would carry the variable to the caller's endpoint.
    const moved = { ...read, endpoint: 'https://evil.example.com' };
    expectRefused(await call('PUT', api('/guardrails/profiles/by-admin'), moved, guard), 'endpoint');
    expect((await call('PUT', api('/guardrails/profiles/by-admin'), moved, ADMIN)).status).toBe(200);
  });

  it('refuses an alerts role an env reference in a channel secret or header', async () => {
    const alerts = bearer(await tokenOf('alert-editor', ['alerts:read', 'alerts:write']));
    const channel = { id: 'hook', type: 'webhook', url: 'https://alerts.example.com', secret: STOLEN };
    expectRefused(await call('POST', api('/alerts/channels'), channel, alerts), 'secret');
    const withHeaders = { ...channel, secret: 'a-plain-secret-of-16+', headers: { 'x-auth': STOLEN } };
    expectRefused(await call('POST', api('/alerts/channels'), withHeaders, alerts), 'headers.x-auth');
    const { headers: _none, ...plain } = withHeaders;
    expect((await call('POST', api('/alerts/channels'), plain, alerts)).status).toBe(201);
    expectRefused(await call('PATCH', api('/alerts/channels/hook'), { secret: STOLEN }, alerts), 'secret');
    const mail = {
      id: 'mail',
      type: 'email',
      host: 'smtp.example.com',
      password: 'gcp-sm.projects/p/secrets/s',
      from: 'gw@example.com',
      to: ['ops@example.com'],
    };
    expectRefused(await call('POST', api('/alerts/channels'), mail, alerts), 'password');
    expect((await call('POST', api('/alerts/channels'), { ...mail, id: 'admin-mail' }, ADMIN)).status).toBe(
      201,
    );
  });

  it("resolves Admin's references in an alert channel at each send", async () => {
    const receiver = await startFakeWebhookReceiver(ALERT_SECRET);
    try {
      const channel = {
        id: 'admin-hook',
        type: 'webhook',
        url: receiver.url,
        secret: 'env.ALERT_TEST_SECRET',
        headers: { 'x-receiver-auth': 'env.ALERT_TEST_SECRET' },
      };
      expect((await call('POST', api('/alerts/channels'), channel, ADMIN)).status).toBe(201);
      const sent = await call('POST', api('/alerts/channels/admin-hook/test'), undefined, ADMIN);
      expect(sent.body.outcome, JSON.stringify(sent.body)).toBe('sent');
      expect(receiver.last().headers['x-receiver-auth']).toBe(ALERT_SECRET);
      // A reference without a value fails the send, naming it, without retries.
      const missing = { ...channel, id: 'admin-hook-missing', secret: 'env.ALERT_TEST_NOT_SET_ANYWHERE' };
      expect((await call('POST', api('/alerts/channels'), missing, ADMIN)).status).toBe(201);
      const failed = await call('POST', api('/alerts/channels/admin-hook-missing/test'), undefined, ADMIN);
      expect(failed.body).toMatchObject({ outcome: 'failed', attempts: 1 });
      expect(failed.body.error).toContain("secret names 'env.ALERT_TEST_NOT_SET_ANYWHERE'");
    } finally {
      await receiver.close();
    }
  });

  it("confines Admin's references to admin.secret_references.allow, never gw's own variables (issue 42)", async () => {
    const ownCredentials: Array<[string, Json, string, string]> = [
      ['/providers', { provider: 'openai', keys: [{ value: STOLEN }] }, 'keys[0].value', STOLEN],
      [
        '/alerts/channels',
        {
          id: 'own-hook',
          type: 'webhook',
          url: 'https://alerts.example.com',
          secret: 'a-plain-secret-of-16+',
          headers: { authorization: 'env.GW_CLUSTER_TOKEN' },
        },
        'headers.authorization',
        'env.GW_CLUSTER_TOKEN',
      ],
      [
        '/guardrails/profiles',
        azure('gw-own', 'env.GW_LOGS_DATABASE_URL'),
        'api_key',
        'env.GW_LOGS_DATABASE_URL',
      ],
      ['/guardrails/profiles', azure('redis', 'env.REDIS_URL'), 'api_key', 'env.REDIS_URL'],
    ];
    for (const [path, body, field, reference] of ownCredentials) {
      const answer = await call('POST', api(path), body, ADMIN);
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body.error).toMatchObject({ code: 'secret_reference', param: field });
      expect(answer.body.error.message).toContain(`${field}: '${reference}'`);
      expect(answer.body.error.message).toContain('is a variable gw itself reads');
      expect(JSON.stringify(answer.body)).not.toContain(ADMIN_TOKEN);
    }
    // Not in the allow list: refused; in it: taken.
    const unlisted = await call('POST', api('/guardrails/profiles'), azure('unlisted', 'env.PATH'), ADMIN);
    expect(unlisted.status).toBe(400);
    expect(unlisted.body.error).toMatchObject({ code: 'secret_reference', param: 'api_key' });
    expect(unlisted.body.error.message).toContain('admin.secret_references.allow');
    const listed = azure('listed', 'env.ALERT_TEST_SECRET');
    expect((await call('POST', api('/guardrails/profiles'), listed, ADMIN)).status).toBe(201);
    const vault = await call('POST', api('/guardrails/profiles'), azure('vault', 'vault.kv/gw#k'), ADMIN);
    expect(vault.status).toBe(400);
    expect(vault.body.error.message).toContain("api_key: 'vault.kv/gw#k'");
    const profiles = (await get(api('/guardrails/profiles'), ADMIN)).body.map((profile: Json) => profile.id);
    // ('own' is an earlier case's profile, made with a literal key: this case's are named apart.)
    for (const refused of ['gw-own', 'redis', 'unlisted', 'vault']) expect(profiles).not.toContain(refused);
    // The config file's own reference stays the file's: kept where it is sent, never sent elsewhere.
    const { name: _name, ...file } = (await get(api('/providers/mistral'), ADMIN)).body;
    expect(file.keys[0].value).toBe('env.FILE_PROVIDER_KEY');
    const retried = { ...file, network_config: { ...file.network_config, max_retries: 1 } };
    expect((await call('PUT', api('/providers/mistral'), retried, ADMIN)).status).toBe(200);
    const repoint = { network_config: { base_url: 'https://evil.example.com' } };
    const moved = await call('PATCH', api('/providers/mistral'), repoint, ADMIN);
    expect(moved.status, JSON.stringify(moved.body)).toBe(400);
    expect(moved.body.error).toMatchObject({ code: 'secret_reference', param: 'network_config.base_url' });
    expect(moved.body.error.message).toContain("'env.FILE_PROVIDER_KEY'");
    expect(JSON.stringify(moved.body)).not.toContain(FILE_KEY);
    expect((await get(api('/providers/mistral'), ADMIN)).body.network_config.base_url).toBe(
      'https://mistral.example.com',
    );
  });

  it('keeps the URL credentials a read sends back masked, whatever else of the URL changed (issue 42)', async () => {
    const receiver = await startFakeWebhookReceiver(ALERT_SECRET);
    try {
      const origin = receiver.url;
      const channel = {
        id: 'masked-url',
        type: 'webhook',
        url: origin.replace('http://', 'http://hook-user:hook-p4ss@') + '/hook?token=t0ken-value&team=a',
        secret: ALERT_SECRET,
      };
      expect((await call('POST', api('/alerts/channels'), channel, ADMIN)).status).toBe(201);
      const path = api('/alerts/channels/masked-url');
      /** The path and query the receiver got from a test send. */
      const sentTo = async () => {
        const sent = await call('POST', `${path}/test`, undefined, ADMIN);
        expect(sent.body.outcome, JSON.stringify(sent.body)).toBe('sent');
        return receiver.last().path;
      };
      // A role without secrets:read sends back what it read, [redacted] and all.
      const editor = bearer(await tokenOf('alert-url-editor', ['alerts:read', 'alerts:write']));
      const read = (await get(path, editor)).body;
      expect(read.url).toBe(
        `${origin.replace('http://', 'http://hook-user:[redacted]@')}/hook?token=[redacted]&team=a`,
      );
      const renamed = await call('PUT', path, { ...read, name: 'renamed' }, editor);
      expect(renamed.status, JSON.stringify(renamed.body)).toBe(200);
      expect(await sentTo()).toBe('/hook?token=t0ken-value&team=a');
      // Admin edits the path and a parameter of the URL as answers show it.
      const shown = (await get(path, ADMIN)).body;
      const masked = `${origin.replace('http://', 'http://hook-user:****@')}/hook?token=****&team=a`;
      expect(shown.url).toBe(masked);
      const edited = { ...shown, url: masked.replace('/hook?', '/hook2?').replace('team=a', 'team=b') };
      expect((await call('PUT', path, edited, ADMIN)).status).toBe(200);
      expect(await sentTo()).toBe('/hook2?token=t0ken-value&team=b');
      // The masks do not take the stored credentials to another origin; a new value replaces the stored one.
      const elsewhere = { ...shown, url: masked.replace('127.0.0.1', 'localhost') };
      const moved = await call('PUT', path, elsewhere, ADMIN);
      expect(moved.status, JSON.stringify(moved.body)).toBe(400);
      expect(moved.body.error).toMatchObject({ param: 'url', message: expect.stringMatching(/^url: /) });
      expect(JSON.stringify(moved.body)).not.toContain('t0ken-value');
      const renewed = { ...shown, url: masked.replace('token=****', 'token=new-token') };
      expect((await call('PUT', path, renewed, ADMIN)).status).toBe(200);
      expect(await sentTo()).toBe('/hook?token=new-token&team=a');
    } finally {
      await receiver.close();
    }
  });

  it("keeps Admin's stored credentials from being moved to a new destination by a narrow role", async () => {
    const guard = bearer(await tokenOf('guard-mover', ['guardrails:read', 'guardrails:write']));
    const alerts = bearer(await tokenOf('alert-mover', ['alerts:read', 'alerts:write']));
    const providers = bearer(await tokenOf('provider-mover', ['providers:read', 'providers:write']));
    // A guardrail profile: the read sent back with another endpoint would carry Admin's key there.
    const profile = azure('admin-azure', 'azure-admin-key-0123456789');
    expect((await call('POST', api('/guardrails/profiles'), profile, ADMIN)).status).toBe(201);
    const read = (await get(api('/guardrails/profiles/admin-azure'), guard)).body;
    const moved = { ...read, endpoint: 'https://evil.example.com' };
    expectRefused(await call('PUT', api('/guardrails/profiles/admin-azure'), moved, guard), 'endpoint');
    const renewed = { ...moved, api_key: 'the-callers-own-key-0001' };
    expect((await call('PUT', api('/guardrails/profiles/admin-azure'), renewed, guard)).status).toBe(200);
    // An alert channel: a patch of its url alone keeps its signing secret.
    const channel = {
      id: 'admin-signed',
      type: 'webhook',
      url: 'https://a.example.com',
      secret: 'admin-signing-secret-0123',
    };
    expect((await call('POST', api('/alerts/channels'), channel, ADMIN)).status).toBe(201);
    const patch = { url: 'https://evil.example.com' };
    expectRefused(await call('PATCH', api('/alerts/channels/admin-signed'), patch, alerts), 'url');
    expect((await call('PATCH', api('/alerts/channels/admin-signed'), patch, ADMIN)).status).toBe(200);
    // A provider: a patch of its base URL alone keeps its keys.
    const provider = {
      provider: 'anthropic',
      keys: [{ value: 'sk-ant-admin-0123456789abcdef' }],
      network_config: { base_url: 'https://api.example.com' },
    };
    expect((await call('POST', api('/providers'), provider, ADMIN)).status).toBe(201);
    const repoint = { network_config: { base_url: 'https://evil.example.com' } };
    expectRefused(
      await call('PATCH', api('/providers/anthropic'), repoint, providers),
      'network_config.base_url',
    );
    expect((await get(api('/providers/anthropic'), ADMIN)).body.network_config.base_url).toBe(
      'https://api.example.com',
    );
    expect((await call('DELETE', api('/providers/anthropic'), undefined, ADMIN)).status).toBe(200);
  });

  it('refuses an env reference in an MCP client URL to every role, Admin too: it is no credential field', async () => {
    const mcp = bearer(await tokenOf('mcp-editor', ['mcp:read', 'mcp:write']));
    const client = { name: 'steal', connection_type: 'http', connection_string: STOLEN };
    for (const caller of [mcp, ADMIN]) {
      const answer = await call('POST', api('/mcp/client'), client, caller);
      expect(answer.status, JSON.stringify(answer.body)).toBe(400);
      expect(answer.body.error).toMatchObject({ code: 'secret_reference', param: 'connection_string' });
      // Its schema does not declare it a credential: a reference there would be sent as written, never read.
      expect(answer.body.error.message).toContain('connection_string is not a credential field');
    }
  });

  it('refuses a providers role a reference in a provider key, and gives the permission to Admin alone', async () => {
    const providers = bearer(await tokenOf('provider-editor', ['providers:read', 'providers:write']));
    const provider = { provider: 'openai', keys: [{ value: STOLEN }] };
    expectRefused(await call('POST', api('/providers'), provider, providers), 'keys[0].value');
    const custom = await call(
      'POST',
      api('/roles'),
      { id: 'ref', permissions: ['secrets:reference'] },
      ADMIN,
    );
    expect(custom.status).toBe(400);
    expect(custom.body.error.message).toContain("permissions[0]: 'secrets:reference'");
    const roles = (await get(api('/roles'), ADMIN)).body as Json[];
    const held = (id: string) => roles.find((role) => role.id === id).permissions as string[];
    expect(held('admin')).toContain('secrets:reference');
    expect(held('developer')).not.toContain('secrets:reference');
    expect(held('viewer')).not.toContain('secrets:reference');
    expect((await get(api('/whoami'), ADMIN)).body.permissions).toContain('secrets:reference');
  });
});
