import { readFile } from 'node:fs/promises';
import type { VaultConfig } from '@gw/shared';
import { z } from 'zod';
import { type SecretBackend, SecretReadError } from '../secret-backend.ts';
import { callJson } from './http-json.ts';

type HashicorpConfig = NonNullable<VaultConfig['hashicorp']>;

const kvAnswerSchema = z.object({
  data: z.object({
    data: z.record(z.string(), z.unknown()).nullable(),
    metadata: z.looseObject({}).optional(),
  }),
});
const loginAnswerSchema = z.object({
  auth: z.object({
    client_token: z.string().min(1),
    lease_duration: z.number().int().min(0),
    renewable: z.boolean().default(false),
  }),
});

interface Session {
  token: string;
  renewable: boolean;
  /** Renewed (or logged in again) from then on: two thirds into the lease. */
  renewAt: number;
  expiresAt: number;
}

/**
 * HashiCorp Vault, KV version 2, over its HTTP API (HashiCorp publishes no Node SDK). `mount/path` reads
 * `GET /v1/<mount>/data/<path>`. Token auth sends the configured token; Kubernetes auth exchanges the pod's
 * service-account JWT at `auth/<mount>/login`, renews the token two thirds into its lease and logs in again when
 * renewal fails or Vault refuses the token.
 */
export class HashicorpVaultBackend implements SecretBackend {
  readonly name = 'vault' as const;
  private session: Session | undefined;
  private login: Promise<Session> | undefined;
  private readonly config: HashicorpConfig;
  private readonly timeoutMs: number;

  constructor(options: { config: HashicorpConfig; timeoutMs: number }) {
    this.config = options.config;
    this.timeoutMs = options.timeoutMs;
  }

  async read(secret: string): Promise<Record<string, unknown>> {
    const slash = secret.indexOf('/');
    const path = `${secret.slice(0, slash)}/data/${secret.slice(slash + 1)}`;
    let answer: unknown;
    try {
      answer = await this.call('GET', path, await this.token());
    } catch (error) {
      // A revoked or expired Kubernetes-auth token: log in again once.
      if (!(this.config.auth.method === 'kubernetes' && /answered 403/.test((error as Error).message)))
        throw error;
      this.session = undefined;
      answer = await this.call('GET', path, await this.token());
    }
    const parsed = kvAnswerSchema.safeParse(answer);
    if (!parsed.success || !parsed.data.data.data) {
      throw new SecretReadError(
        'Vault answered no KV v2 data (is the mount KV version 2, and the secret not deleted?)',
      );
    }
    return parsed.data.data.data;
  }

  private call(method: 'GET' | 'POST', path: string, token?: string, body?: unknown): Promise<unknown> {
    return callJson({
      service: 'Vault',
      url: `${this.config.address.replace(/\/+$/, '')}/v1/${path}`,
      method,
      headers: {
        ...(token && { 'x-vault-token': token }),
        ...(this.config.namespace && { 'x-vault-namespace': this.config.namespace }),
        ...(body !== undefined && { 'content-type': 'application/json' }),
      },
      ...(body !== undefined && { body: JSON.stringify(body) }),
      timeoutMs: this.timeoutMs,
    });
  }

  private async token(): Promise<string> {
    const { auth } = this.config;
    if (auth.method === 'token') return auth.token;
    const now = Date.now();
    const session = this.session;
    if (session && now < session.renewAt) return session.token;
    if (session?.renewable && now < session.expiresAt) {
      try {
        this.session = toSession(await this.call('POST', 'auth/token/renew-self', session.token, {}));
        return this.session.token;
      } catch {
        // Renewal refused (max TTL reached, token revoked): log in again below.
      }
    }
    // Concurrent reads share one login.
    this.login ??= this.kubernetesLogin(auth).finally(() => {
      this.login = undefined;
    });
    this.session = await this.login;
    return this.session.token;
  }

  private async kubernetesLogin(
    auth: Extract<HashicorpConfig['auth'], { method: 'kubernetes' }>,
  ): Promise<Session> {
    let jwt: string;
    try {
      jwt = (await readFile(auth.token_file, 'utf8')).trim();
    } catch (error) {
      throw new SecretReadError(
        `cannot read the service-account token ${auth.token_file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
    return toSession(
      await this.call('POST', `auth/${auth.mount}/login`, undefined, { role: auth.role, jwt }),
    );
  }
}

function toSession(answer: unknown): Session {
  const parsed = loginAnswerSchema.safeParse(answer);
  if (!parsed.success) throw new SecretReadError('Vault answered a login without auth.client_token');
  const { client_token, lease_duration, renewable } = parsed.data.auth;
  const now = Date.now();
  return {
    token: client_token,
    renewable,
    renewAt: lease_duration === 0 ? Number.POSITIVE_INFINITY : now + (lease_duration * 1000 * 2) / 3,
    expiresAt: lease_duration === 0 ? Number.POSITIVE_INFINITY : now + lease_duration * 1000,
  };
}
