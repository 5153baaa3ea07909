import { readFile } from 'node:fs/promises';
import type { VaultConfig } from '@gw/shared';
import { z } from 'zod';
import { type SecretBackend, SecretReadError } from '../secret-backend.ts';
import { callJson } from './http-json.ts';

type AzureConfig = VaultConfig['azure_key_vault'];

const API_VERSION = '7.5';
const KEY_VAULT_SCOPE = 'https://vault.azure.net/.default';
const secretAnswerSchema = z.object({ value: z.string() });
const tokenAnswerSchema = z.object({
  access_token: z.string().min(1),
  expires_in: z.coerce.number().positive(),
});

/**
 * Azure Key Vault over its REST API (`GET /secrets/<name>?api-version=7.5`) with a Microsoft Entra token from
 * the client-credentials grant: a client secret, or workload identity's federated token (AKS). Plain REST
 * rather than `@azure/keyvault-secrets` + `@azure/identity`: identity brings MSAL for one token call, and the
 * SDK's challenge-based auth refuses plain-HTTP endpoints (docs/vault.md).
 */
export class AzureKeyVaultBackend implements SecretBackend {
  readonly name = 'azure-kv' as const;
  private token: { value: string; renewAt: number } | undefined;
  private pending: Promise<string> | undefined;
  private readonly options: { config: AzureConfig; environment: NodeJS.ProcessEnv; timeoutMs: number };

  constructor(options: AzureKeyVaultBackend['options']) {
    this.options = options;
  }

  async read(secret: string): Promise<string> {
    const [vaultName, secretName] = secret.split('/') as [string, string];
    const base = this.options.config.endpoint?.replace(/\/+$/, '') ?? `https://${vaultName}.vault.azure.net`;
    const answer = await callJson({
      service: 'Azure Key Vault',
      url: `${base}/secrets/${encodeURIComponent(secretName)}?api-version=${API_VERSION}`,
      method: 'GET',
      headers: { authorization: `Bearer ${await this.accessToken()}` },
      timeoutMs: this.options.timeoutMs,
    });
    const parsed = secretAnswerSchema.safeParse(answer);
    if (!parsed.success) throw new SecretReadError('Azure Key Vault answered no value');
    return parsed.data.value;
  }

  private async accessToken(): Promise<string> {
    if (this.token && Date.now() < this.token.renewAt) return this.token.value;
    this.pending ??= this.requestToken().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async requestToken(): Promise<string> {
    const { config, environment } = this.options;
    const tenant = config.tenant_id ?? environment['AZURE_TENANT_ID'];
    const clientId = config.client_id ?? environment['AZURE_CLIENT_ID'];
    const tokenFile = config.federated_token_file ?? environment['AZURE_FEDERATED_TOKEN_FILE'];
    if (!tenant || !clientId || !(config.client_secret || tokenFile)) {
      throw new SecretReadError(
        'no Azure credentials: set vault.azure_key_vault tenant_id, client_id and client_secret, or workload identity (AZURE_TENANT_ID, AZURE_CLIENT_ID, AZURE_FEDERATED_TOKEN_FILE)',
      );
    }
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      scope: KEY_VAULT_SCOPE,
    });
    if (config.client_secret) form.set('client_secret', config.client_secret);
    else if (tokenFile) {
      form.set('client_assertion_type', 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer');
      form.set('client_assertion', await readTokenFile(tokenFile));
    }
    const answer = await callJson({
      service: 'Microsoft Entra ID',
      url: `${config.authority_host.replace(/\/+$/, '')}/${encodeURIComponent(tenant)}/oauth2/v2.0/token`,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form.toString(),
      timeoutMs: this.options.timeoutMs,
    });
    const parsed = tokenAnswerSchema.safeParse(answer);
    if (!parsed.success) throw new SecretReadError('Microsoft Entra ID answered no access_token');
    // Renewed at the latest five minutes before it expires (or halfway for short tokens).
    const lifetimeMs = parsed.data.expires_in * 1000;
    this.token = {
      value: parsed.data.access_token,
      renewAt: Date.now() + Math.max(lifetimeMs / 2, lifetimeMs - 300_000),
    };
    return this.token.value;
  }
}

async function readTokenFile(path: string): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch (error) {
    throw new SecretReadError(
      `cannot read the federated token ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}
