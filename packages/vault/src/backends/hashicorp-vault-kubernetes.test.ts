// Kubernetes auth: the service-account JWT is exchanged at auth/kubernetes/login, the token is renewed when
// two thirds of its lease are gone, and a revoked token means one login again, not a failed read.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeHashicorpVault } from '@gw/testkit';
import { afterEach, expect, it, vi } from 'vitest';
import { HashicorpVaultBackend } from './hashicorp-vault.ts';

const JWT = 'eyJhbGciOiJSUzI1NiJ9.service-account.signature';
const closers: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const close of closers.splice(0)) await close();
});

async function setUp(options: { jwt?: string; leaseSeconds?: number } = {}) {
  const vault = await startFakeHashicorpVault({
    serviceAccountJwt: JWT,
    leaseSeconds: options.leaseSeconds ?? 60,
  });
  const directory = await mkdtemp(join(tmpdir(), 'gw-vault-k8s-'));
  const tokenFile = join(directory, 'token');
  await writeFile(tokenFile, `${options.jwt ?? JWT}\n`);
  closers.push(
    () => vault.close(),
    () => rm(directory, { recursive: true, force: true }),
  );
  vault.put('gw/openai', { api_key: 'sk-kubernetes-auth-value-000001' });
  const backend = new HashicorpVaultBackend({
    config: {
      address: vault.url,
      auth: { method: 'kubernetes', role: 'gw', mount: 'kubernetes', token_file: tokenFile },
    },
    timeoutMs: 2_000,
  });
  return { vault, backend };
}

it('logs in with the service-account JWT once, and reads with the token it got', async () => {
  const { vault, backend } = await setUp();
  expect(await backend.read('secret/gw/openai')).toEqual({ api_key: 'sk-kubernetes-auth-value-000001' });
  await backend.read('secret/gw/openai');
  expect(vault.logins).toEqual([{ role: 'gw', jwt: JWT }]);
});

it('renews the token two thirds into its lease', async () => {
  const { vault, backend } = await setUp({ leaseSeconds: 3 });
  await backend.read('secret/gw/openai');
  vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 2_500 });
  await backend.read('secret/gw/openai');
  expect(vault.renewals()).toBe(1);
  expect(vault.logins).toHaveLength(1);
});

it('logs in again when Vault refuses the token (revoked), and the read succeeds', async () => {
  const { vault, backend } = await setUp();
  await backend.read('secret/gw/openai');
  vault.revokeTokens();
  expect(await backend.read('secret/gw/openai')).toEqual({ api_key: 'sk-kubernetes-auth-value-000001' });
  expect(vault.logins).toHaveLength(2);
});

it('names the failure when the role refuses the JWT, without the JWT', async () => {
  const { backend } = await setUp({ jwt: 'eyJ.other-service-account.sig' });
  const error = await backend.read('secret/gw/openai').catch((failure: unknown) => failure as Error);
  expect(error).toBeInstanceOf(Error);
  expect((error as Error).message).toBe('Vault answered 403: permission denied');
  expect((error as Error).message).not.toContain('other-service-account');
});
