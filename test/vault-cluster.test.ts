// Secrets from a vault in cluster mode (docs/vault.md): each router replica resolves the provider key itself,
// and POST /api/vault/refresh on the admin process reaches every replica through the store, so a rotation
// serves the next requests of all of them without a restart.

import { startCluster, startFakeHashicorpVault, startFakeOpenAi, waitFor } from '@gw/testkit';
import { afterAll, expect, it } from 'vitest';

const ADMIN_TOKEN = 'vault-cluster-admin-token-01';
const closers: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

it('serves a rotated key from every router replica after one refresh', async () => {
  const vault = await startFakeHashicorpVault();
  const upstream = await startFakeOpenAi();
  closers.push(
    () => vault.close(),
    () => upstream.close(),
  );
  vault.put('gw/openai', { api_key: 'sk-cluster-first-key-0000000001' });
  const cluster = await startCluster({
    adminToken: ADMIN_TOKEN,
    replicas: { router: 2 },
    config: {
      providers: {
        openai: {
          keys: [{ value: 'vault.secret/gw/openai#api_key', models: [], weight: 1 }],
          network_config: { base_url: upstream.url },
        },
      },
      vault: vault.vaultConfig,
    },
  });
  closers.push(() => cluster.close());
  const chat = () =>
    fetch(`${cluster.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    });
  const keysSeen = async (count: number) => {
    const before = upstream.requests.length;
    for (let index = 0; index < count; index++) expect((await chat()).status).toBe(200);
    return new Set(upstream.requests.slice(before).map((request) => request.headers.authorization));
  };
  expect(await keysSeen(6)).toEqual(new Set(['Bearer sk-cluster-first-key-0000000001']));

  vault.put('gw/openai', { api_key: 'sk-cluster-rotated-key-000000002' });
  const refreshed = await fetch(`${cluster.adminUrl}/api/vault/refresh`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  expect(refreshed.status).toBe(200);
  // Replicas refresh on the published request, each in its own time.
  await waitFor(async () => {
    const seen = await keysSeen(6);
    return seen.size === 1 && seen.has('Bearer sk-cluster-rotated-key-000000002');
  });
  const status = await fetch(`${cluster.adminUrl}/api/vault/secrets`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  expect(await status.json()).toEqual({
    secrets: [expect.objectContaining({ reference: 'vault.secret/gw/openai#api_key', resolved: true })],
  });
  expect(cluster.output()).not.toContain('sk-cluster-');
});
