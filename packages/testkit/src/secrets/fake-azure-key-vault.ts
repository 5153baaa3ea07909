import { randomUUID } from 'node:crypto';
import { startFakeUpstream } from '../fake-upstream.ts';
import type { FakeSecretManager } from './fake-secret-manager.ts';

/**
 * Azure Key Vault on loopback, with its Microsoft Entra token endpoint: `POST /<tenant>/oauth2/v2.0/token`
 * (client credentials, scope `https://vault.azure.net/.default`) and `GET /secrets/<name>?api-version=…`
 * answering `{value, id, attributes}` for that token only (401 with a bearer challenge otherwise).
 */
export async function startFakeAzureKeyVault(options: { tenant?: string; vaultName?: string } = {}) {
  const tenant = options.tenant ?? 'gw-tenant';
  const vaultName = options.vaultName ?? 'gw-vault';
  const client = { id: randomUUID(), secret: `azure-client-${randomUUID()}` };
  const issued = new Set<string>();
  const secrets = new Map<string, Array<{ value: string; version: string }>>();
  const tokenRequests: Array<Record<string, string>> = [];
  let broken: number | undefined;
  let readCount = 0;
  const vaultError = (status: number, code: string, message: string) => ({
    status,
    json: { error: { code, message } },
  });

  const fake = await startFakeUpstream([
    {
      method: 'POST',
      path: new RegExp(`^/${tenant}/oauth2/v2\\.0/token$`),
      answer: (request) => {
        const form = Object.fromEntries(new URLSearchParams(request.raw.toString('utf8')));
        tokenRequests.push(form);
        const valid =
          form['grant_type'] === 'client_credentials' &&
          form['client_id'] === client.id &&
          form['client_secret'] === client.secret &&
          form['scope'] === 'https://vault.azure.net/.default';
        if (!valid) {
          return {
            status: 401,
            json: {
              error: 'invalid_client',
              error_description: 'AADSTS7000215: Invalid client secret provided.',
            },
          };
        }
        const token = `eyJ0eXAi.${randomUUID()}`;
        issued.add(token);
        return {
          json: { token_type: 'Bearer', expires_in: 3599, ext_expires_in: 3599, access_token: token },
        };
      },
    },
    {
      method: 'GET',
      path: /^\/secrets\/[A-Za-z0-9-]+$/,
      answer: (request) => {
        readCount++;
        const [path = '', query = ''] = request.path.split('?');
        if (!new URLSearchParams(query).get('api-version')) {
          return vaultError(400, 'BadParameter', 'The api-version query parameter is required.');
        }
        const bearer = String(request.headers.authorization ?? '').replace(/^Bearer /, '');
        if (!issued.has(bearer)) {
          return {
            status: 401,
            headers: {
              'www-authenticate': `Bearer authorization="https://login.microsoftonline.com/${tenant}", resource="https://vault.azure.net"`,
            },
            json: {
              error: { code: 'Unauthorized', message: 'AKV10000: Request is missing a Bearer or PoP token.' },
            },
          };
        }
        if (broken !== undefined)
          return vaultError(broken, 'ServiceUnavailable', 'The service is unavailable.');
        const name = path.slice('/secrets/'.length);
        const current = secrets.get(name)?.at(-1);
        if (!current) {
          return vaultError(
            404,
            'SecretNotFound',
            `A secret with (name/id) ${name} was not found in this key vault.`,
          );
        }
        return {
          json: {
            value: current.value,
            id: `https://${vaultName}.vault.azure.net/secrets/${name}/${current.version}`,
            attributes: {
              enabled: true,
              created: 1_700_000_000,
              updated: 1_700_000_000,
              recoveryLevel: 'Recoverable',
            },
            tags: {},
          },
        };
      },
    },
  ]);

  return {
    url: fake.url,
    tokenRequests,
    reference: (name: string, field?: string) => `azure-kv.${vaultName}/${name}${field ? `#${field}` : ''}`,
    put(name: string, fields: Record<string, string>) {
      secrets.set(name, [
        ...(secrets.get(name) ?? []),
        { value: JSON.stringify(fields), version: randomUUID().replaceAll('-', '') },
      ]);
    },
    breakReads(status: number) {
      broken = status;
    },
    heal() {
      broken = undefined;
    },
    reads: () => readCount,
    vaultConfig: {
      azure_key_vault: {
        tenant_id: tenant,
        client_id: client.id,
        client_secret: client.secret,
        authority_host: fake.url,
        endpoint: fake.url,
      },
    },
    close: fake.close,
  } satisfies FakeSecretManager & Record<string, unknown>;
}
