import type { VaultConfig } from '@gw/shared';
import { z } from 'zod';
import { type SecretBackend, SecretReadError } from '../secret-backend.ts';
import { callJson } from './http-json.ts';

type GcpConfig = VaultConfig['gcp_secret_manager'];

const accessAnswerSchema = z.object({ payload: z.object({ data: z.base64() }) });
const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/** An OAuth2 access token for Google APIs. */
export type GoogleTokenSource = () => Promise<string>;

/**
 * Application default credentials (or the configured key file) through google-auth-library, as the Vertex
 * adapter; loaded on first use. The client caches its token and refreshes it before it expires.
 */
function defaultTokenSource(config: GcpConfig): GoogleTokenSource {
  let auth: Promise<{ getAccessToken(): Promise<string | null | undefined> }> | undefined;
  return async () => {
    auth ??= import('google-auth-library').then(
      ({ GoogleAuth }) =>
        new GoogleAuth({
          scopes: [CLOUD_PLATFORM_SCOPE],
          ...(config.credentials_file && { keyFilename: config.credentials_file }),
        }),
    );
    let token: string | null | undefined;
    try {
      token = await (await auth).getAccessToken();
    } catch (error) {
      throw new SecretReadError(`no Google credentials (${(error as Error).message.slice(0, 200)})`);
    }
    if (!token) throw new SecretReadError('no Google access token from the application default credentials');
    return token;
  };
}

/**
 * Google Secret Manager over its REST API (`GET /v1/<version>:access`, payload base64). Plain REST rather than
 * `@google-cloud/secret-manager`: that client brings google-gax with gRPC and protobuf for one GET (docs/vault.md).
 */
export class GcpSecretManagerBackend implements SecretBackend {
  readonly name = 'gcp-sm' as const;
  private readonly options: { config: GcpConfig; timeoutMs: number; tokenSource: GoogleTokenSource };

  constructor(options: {
    config: GcpConfig;
    timeoutMs: number;
    tokenSource?: GoogleTokenSource | undefined;
  }) {
    this.options = { ...options, tokenSource: options.tokenSource ?? defaultTokenSource(options.config) };
  }

  async read(secret: string): Promise<string> {
    const version = secret.includes('/versions/') ? secret : `${secret}/versions/latest`;
    const answer = await callJson({
      service: 'Google Secret Manager',
      url: `${this.options.config.endpoint.replace(/\/+$/, '')}/v1/${version}:access`,
      method: 'GET',
      headers: { authorization: `Bearer ${await this.options.tokenSource()}` },
      timeoutMs: this.options.timeoutMs,
    });
    const parsed = accessAnswerSchema.safeParse(answer);
    if (!parsed.success) throw new SecretReadError('Google Secret Manager answered no payload.data');
    return Buffer.from(parsed.data.payload.data, 'base64').toString('utf8');
  }
}
