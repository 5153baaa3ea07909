import { randomUUID } from 'node:crypto';
import { type FakeUpstreamRequest, startFakeUpstream } from '../fake-upstream.ts';
import type { FakeSecretManager } from './fake-secret-manager.ts';

/**
 * HashiCorp Vault's HTTP API on loopback: KV v2 reads (`GET /v1/<mount>/data/<path>` answering
 * `{data:{data,metadata:{version}}}`), `auth/kubernetes/login` checking the service-account JWT, and
 * `auth/token/renew-self`. Tokens are checked (`X-Vault-Token`); a revoked one answers 403 as Vault does.
 */
export async function startFakeHashicorpVault(
  options: { mount?: string; serviceAccountJwt?: string; role?: string; leaseSeconds?: number } = {},
) {
  const mount = options.mount ?? 'secret';
  const rootToken = `hvs.${randomUUID()}`;
  const tokens = new Set([rootToken]);
  const secrets = new Map<string, Array<Record<string, string>>>();
  const logins: Array<{ role: unknown; jwt: unknown }> = [];
  let renewals = 0;
  let broken: number | undefined;
  let readCount = 0;
  const errors = (status: number, messages: string[]) => ({ status, json: { errors: messages } });

  const authorized = (request: FakeUpstreamRequest) => {
    const token = request.headers['x-vault-token'];
    return typeof token === 'string' && tokens.has(token);
  };
  const issue = () => {
    const token = `hvs.${randomUUID()}`;
    tokens.add(token);
    return {
      status: 200,
      json: {
        auth: {
          client_token: token,
          accessor: randomUUID(),
          policies: ['default', 'gw'],
          lease_duration: options.leaseSeconds ?? 3600,
          renewable: true,
        },
      },
    };
  };

  const fake = await startFakeUpstream([
    {
      method: 'GET',
      path: new RegExp(`^/v1/${mount}/data/`),
      answer: (request) => {
        readCount++;
        if (broken !== undefined) return errors(broken, ['internal error']);
        if (!authorized(request)) return errors(403, ['permission denied']);
        const path = request.path.split('?')[0]?.slice(`/v1/${mount}/data/`.length) ?? '';
        const versions = secrets.get(path);
        if (!versions) return errors(404, []);
        return {
          json: {
            request_id: randomUUID(),
            lease_id: '',
            renewable: false,
            lease_duration: 0,
            data: {
              data: versions.at(-1),
              metadata: {
                created_time: new Date().toISOString(),
                deletion_time: '',
                destroyed: false,
                version: versions.length,
              },
            },
          },
        };
      },
    },
    {
      method: 'POST',
      path: /^\/v1\/auth\/kubernetes\/login$/,
      answer: (request) => {
        const body = request.body as { role?: unknown; jwt?: unknown };
        logins.push({ role: body.role, jwt: body.jwt });
        if (body.jwt !== options.serviceAccountJwt || body.role !== (options.role ?? 'gw')) {
          return errors(403, ['permission denied']);
        }
        return issue();
      },
    },
    {
      method: 'POST',
      path: /^\/v1\/auth\/token\/renew-self$/,
      answer: (request) => {
        if (!authorized(request)) return errors(403, ['permission denied']);
        renewals++;
        const token = request.headers['x-vault-token'] as string;
        return {
          status: 200,
          json: {
            auth: { client_token: token, lease_duration: options.leaseSeconds ?? 3600, renewable: true },
          },
        };
      },
    },
  ]);

  return {
    url: fake.url,
    rootToken,
    logins,
    renewals: () => renewals,
    /** Revokes every token issued so far (the next read with one answers 403). */
    revokeTokens() {
      tokens.clear();
    },
    reference: (name: string, field?: string) => `vault.${mount}/${name}${field ? `#${field}` : ''}`,
    put(name: string, fields: Record<string, string>) {
      secrets.set(name, [...(secrets.get(name) ?? []), fields]);
    },
    breakReads(status: number) {
      broken = status;
    },
    heal() {
      broken = undefined;
    },
    reads: () => readCount,
    vaultConfig: { hashicorp: { address: fake.url, auth: { method: 'token' as const, token: rootToken } } },
    close: fake.close,
  } satisfies FakeSecretManager & Record<string, unknown>;
}
