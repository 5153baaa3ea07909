// Secrets from a vault (docs/vault.md) through the embedded gateway: a provider key written as a HashiCorp Vault
// reference reaches the upstream, a rotation applies to the next request after a refresh (no restart), a vault
// outage keeps the last good key, and the key never shows in /api/providers, the store's file or the logs.

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseGatewayConfig } from '@gw/shared';
import {
  capturedLogger,
  startFakeAwsSecretsManager,
  startFakeAzureKeyVault,
  startFakeGcpSecretManager,
  startFakeHashicorpVault,
  startFakeOpenAi,
  waitFor,
} from '@gw/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedGateway } from '../src/embedded-gateway.ts';

const ADMIN_TOKEN = 'vault-test-admin-token-0123';
const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function launch(document: Record<string, unknown>, googleTokenSource?: () => Promise<string>) {
  const dataDir = await mkdtemp(join(tmpdir(), 'gw-vault-'));
  closers.push(() => rm(dataDir, { recursive: true, force: true }));
  const { logger, lines } = capturedLogger('vault-test');
  const gateway = await startEmbeddedGateway({
    config: parseGatewayConfig(document, {}),
    logger,
    port: 0,
    host: '127.0.0.1',
    dataDir,
    adminToken: ADMIN_TOKEN,
    environment: {},
    googleTokenSource,
  });
  closers.push(() => gateway.close(1_000));
  const url = `http://127.0.0.1:${gateway.port}`;
  const admin = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      ...(body !== undefined && { body: JSON.stringify(body) }),
    });
    return { status: response.status, text: await response.text() };
  };
  const chat = () =>
    fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
  return { gateway, url, admin, chat, lines, dataDir };
}

describe('a provider key from HashiCorp Vault, through the embedded gateway', () => {
  let vault: Awaited<ReturnType<typeof startFakeHashicorpVault>>;
  let upstream: Awaited<ReturnType<typeof startFakeOpenAi>>;
  let running: Awaited<ReturnType<typeof launch>>;
  const reference = 'vault.secret/gw/openai#api_key';

  beforeAll(async () => {
    vault = await startFakeHashicorpVault();
    upstream = await startFakeOpenAi();
    closers.push(
      () => vault.close(),
      () => upstream.close(),
    );
    vault.put('gw/openai', { api_key: 'sk-vault-first-key-000000000001' });
    running = await launch({
      providers: {
        openai: {
          keys: [{ value: reference, models: [], weight: 1 }],
          network_config: { base_url: upstream.url },
        },
      },
      vault: vault.vaultConfig,
    });
  });

  const lastAuthorization = () => upstream.requests.at(-1)?.headers.authorization;

  it('sends the secret as the key, and picks up a rotation on POST /api/vault/refresh', async () => {
    expect((await running.chat()).status).toBe(200);
    expect(lastAuthorization()).toBe('Bearer sk-vault-first-key-000000000001');

    vault.put('gw/openai', { api_key: 'sk-vault-rotated-key-00000000002' });
    const refreshed = await running.admin('POST', '/api/vault/refresh');
    expect(refreshed.status).toBe(200);
    expect(JSON.parse(refreshed.text).secrets).toEqual([
      expect.objectContaining({ reference, backend: 'vault', resolved: true, last_error: null }),
    ]);
    expect((await running.chat()).status).toBe(200);
    expect(lastAuthorization()).toBe('Bearer sk-vault-rotated-key-00000000002');
  });

  it('keeps the last good key while the vault fails, and says so in GET /api/vault/secrets', async () => {
    vault.breakReads(503);
    vault.put('gw/openai', { api_key: 'sk-vault-unreadable-key-0000003' });
    await running.admin('POST', '/api/vault/refresh');
    expect((await running.chat()).status).toBe(200);
    expect(lastAuthorization()).toBe('Bearer sk-vault-rotated-key-00000000002');
    const status = await running.admin('GET', '/api/vault/secrets');
    expect(status.status).toBe(200);
    expect(JSON.parse(status.text).secrets[0]).toMatchObject({
      reference,
      resolved: true,
      last_error: expect.stringContaining('503'),
    });
    const metrics = await (await fetch(`${running.url}/metrics`)).text();
    expect(metrics).toMatch(/gw_vault_refresh_failures_total\{[^}]*backend="vault"[^}]*\} 1/);
    vault.heal();
    await running.admin('POST', '/api/vault/refresh');
    await running.chat();
    expect(lastAuthorization()).toBe('Bearer sk-vault-unreadable-key-0000003');
  });

  it('never shows the secret in /api/providers, the store, the status or the logs', async () => {
    const providers = await running.admin('GET', '/api/providers');
    const one = await running.admin('GET', '/api/providers/openai');
    expect(providers.status).toBe(200);
    expect(JSON.parse(one.text).keys[0].value).toBe(reference);
    // The store writes its file in the background.
    const store = await waitFor(() =>
      readFile(join(running.dataDir, 'store.json'), 'utf8').catch(() => undefined),
    );
    expect(store).toContain(reference);
    expect(running.lines.join('')).toContain('keeping the last good value');
    const everything = [
      providers.text,
      one.text,
      (await running.admin('GET', '/api/vault/secrets')).text,
      store,
      running.lines.join(''),
    ].join('\n');
    for (const secret of ['first-key-000000000001', 'rotated-key-00000000002', 'unreadable-key-0000003']) {
      expect(everything).not.toContain(secret);
    }
  });

  it('refuses a new vault reference through the admin API without secrets:reference (Admin holds it)', async () => {
    await running.admin('POST', '/api/roles', {
      id: 'provider-editor',
      permissions: ['providers:read', 'providers:write'],
    });
    const token = JSON.parse(
      (await running.admin('POST', '/api/tokens', { name: 'pe', role: 'provider-editor' })).text,
    ).token;
    const provider = {
      provider: 'anthropic',
      keys: [{ value: 'vault.secret/gw/other#api_key', models: [], weight: 1 }],
    };
    const refused = await fetch(`${running.url}/api/providers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(provider),
    });
    expect(refused.status).toBe(400);
    const error = ((await refused.json()) as { error: { message: string; param: string } }).error;
    expect(error.param).toBe('keys[0].value');
    expect(error.message).toContain('vault.secret/gw/other#api_key');
    expect(error.message).toContain('secrets:reference');
    const accepted = await running.admin('POST', '/api/providers', provider);
    expect(accepted.status).toBe(201);
    expect(accepted.text).toContain('vault.secret/gw/other#api_key');
    expect((await running.admin('DELETE', '/api/providers/anthropic')).status).toBe(200);
  });

  it('answers 404 and 405 for what /api/vault does not have', async () => {
    expect((await running.admin('GET', '/api/vault/nothing')).status).toBe(404);
    expect((await running.admin('GET', '/api/vault/refresh')).status).toBe(405);
  });
});

describe('start-up', () => {
  it('fails naming the reference it cannot read, never a value', async () => {
    const vault = await startFakeHashicorpVault();
    closers.push(() => vault.close());
    vault.put('gw/present', { api_key: 'sk-present-startup-value-000001' });
    const error = await launch({
      providers: {
        openai: {
          keys: [
            { value: 'vault.secret/gw/present#api_key', models: [], weight: 1 },
            { value: 'vault.secret/gw/absent#api_key', models: [], weight: 1 },
          ],
        },
      },
      vault: vault.vaultConfig,
    }).then(
      () => undefined,
      (failure: unknown) => failure as Error,
    );
    expect(error?.message).toContain("'vault.secret/gw/absent#api_key'");
    expect(error?.message).toContain('404');
    expect(error?.message).not.toContain('sk-present-startup-value');
  });

  it('fails naming the field of a malformed reference, and of a backend that is not configured', async () => {
    expect(() =>
      parseGatewayConfig({
        providers: { openai: { keys: [{ value: 'vault.secret-without-field', models: [] }] } },
      }),
    ).toThrow(
      /providers\.openai\.keys\[0\]\.value: 'vault\.secret-without-field' is not a valid secret reference/,
    );
    expect(() => parseGatewayConfig({ client: { required_headers: ['aws-sm.some-secret'] } })).toThrow(
      /client\.required_headers\[0\].*secret-manager references are taken by credential fields only/,
    );
    await expect(
      launch({ providers: { openai: { keys: [{ value: 'vault.secret/gw/x#k', models: [], weight: 1 }] } } }),
    ).rejects.toThrow(/'vault\.secret\/gw\/x#k' \(the vault backend is not configured/);
  });

  it('serves keys from Google Secret Manager and Azure Key Vault (JSON fields of their secrets)', async () => {
    const google = await startFakeGcpSecretManager();
    const azure = await startFakeAzureKeyVault();
    const upstream = await startFakeOpenAi();
    closers.push(
      () => google.close(),
      () => azure.close(),
      () => upstream.close(),
    );
    google.put('openai', { api_key: 'sk-google-secret-key-00000000001' });
    azure.put('openai-key', { api_key: 'sk-azure-secret-key-000000000001' });
    for (const [reference, vault, expected, token] of [
      [
        google.reference('openai', 'api_key'),
        google.vaultConfig,
        'sk-google-secret-key-00000000001',
        google.accessToken,
      ],
      [
        azure.reference('openai-key', 'api_key'),
        azure.vaultConfig,
        'sk-azure-secret-key-000000000001',
        undefined,
      ],
    ] as const) {
      const running = await launch(
        {
          providers: {
            openai: {
              keys: [{ value: reference, models: [], weight: 1 }],
              network_config: { base_url: upstream.url },
            },
          },
          vault,
        },
        token === undefined ? undefined : async () => token,
      );
      expect((await running.chat()).status).toBe(200);
      expect(upstream.requests.at(-1)?.headers.authorization).toBe(`Bearer ${expected}`);
    }
    expect(azure.tokenRequests).toHaveLength(1);
  });

  it('resolves an AWS Secrets Manager key before serving, through the credential chain', async () => {
    const aws = await startFakeAwsSecretsManager();
    const upstream = await startFakeOpenAi();
    closers.push(
      () => aws.close(),
      () => upstream.close(),
    );
    aws.putText('gw/openai-key', 'sk-aws-plain-text-key-000000001');
    process.env['AWS_ACCESS_KEY_ID'] = 'AKIAVAULTGATEWAY0000';
    process.env['AWS_SECRET_ACCESS_KEY'] = 'vault-gateway-test-secret-key';
    process.env['AWS_EC2_METADATA_DISABLED'] = 'true';
    const running = await launch({
      providers: {
        openai: {
          keys: [{ value: 'aws-sm.gw/openai-key', models: [], weight: 1 }],
          network_config: { base_url: upstream.url },
        },
      },
      vault: aws.vaultConfig,
    });
    expect((await running.chat()).status).toBe(200);
    expect(upstream.requests.at(-1)?.headers.authorization).toBe('Bearer sk-aws-plain-text-key-000000001');
    expect(aws.signatures.at(-1)).toEqual({ accessKeyId: 'AKIAVAULTGATEWAY0000', region: 'us-east-1' });
  });
});
