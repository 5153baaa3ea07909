import { GatewayError } from '@gw/shared';
import { JWT } from 'google-auth-library';
import type { ServiceAccount } from './vertex-config.ts';

/** The token endpoint google-auth-library's JWT client always posts to. */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

interface CachedClient {
  credentialsText: string;
  client: JWT;
}

/**
 * google-auth-library posts the JWT-bearer exchange to Google's endpoint whatever the key file's `token_uri`
 * says; the key file is the authority on where its tokens come from (Google's Python library honours it),
 * so the exchange is redirected there.
 */
function honourTokenUri(client: JWT, tokenUri: string | undefined): void {
  if (!tokenUri || tokenUri === GOOGLE_TOKEN_URL) return;
  client.transporter.interceptors.request.add({
    resolved: async (options) => {
      if (options.url.href === GOOGLE_TOKEN_URL) options.url = new URL(tokenUri);
      return options;
    },
  });
}

function tokenError(provider: string, error: unknown): GatewayError {
  const status = (error as { response?: { status?: number } }).response?.status;
  const reason = error instanceof Error ? error.message : 'unknown error';
  if (status === undefined) {
    return new GatewayError({
      type: 'upstream_unreachable',
      message: `the Google token endpoint is unreachable (${reason})`,
      provider,
      cause: error,
    });
  }
  // A refused assertion (400 invalid_grant) means the credentials are wrong: not worth a retry.
  return new GatewayError({
    type: 'upstream_error',
    status: status < 500 ? 401 : status,
    message: `the Google token endpoint refused the service account (${reason})`,
    upstream: true,
    provider,
    cause: error,
  });
}

/**
 * OAuth2 access tokens for service accounts, one google-auth-library JWT client per key. The client keeps
 * its token and refreshes it shortly before it expires, and concurrent callers share one exchange, so
 * requests never wait on Google's token endpoint except when the token is due.
 */
export class VertexTokenSource {
  private readonly clients = new Map<string, CachedClient>();

  async accessToken(options: {
    provider: string;
    keyId: string;
    credentialsText: string;
    serviceAccount: ServiceAccount;
  }): Promise<string> {
    const client = this.client(options);
    let token: string | null | undefined;
    try {
      token = (await client.getAccessToken()).token;
    } catch (error) {
      throw tokenError(options.provider, error);
    }
    if (!token) throw tokenError(options.provider, new Error('no access token in the answer'));
    return token;
  }

  private client(options: { keyId: string; credentialsText: string; serviceAccount: ServiceAccount }): JWT {
    const cached = this.clients.get(options.keyId);
    // A key whose credentials changed (config reload) gets a new client; the old token is dropped with it.
    if (cached?.credentialsText === options.credentialsText) return cached.client;
    const account = options.serviceAccount;
    const client = new JWT({
      email: account.client_email,
      key: account.private_key,
      keyId: account.private_key_id,
      scopes: [CLOUD_PLATFORM_SCOPE],
      transporterOptions: { timeout: 30_000 },
    });
    honourTokenUri(client, account.token_uri);
    this.clients.set(options.keyId, { credentialsText: options.credentialsText, client });
    return client;
  }
}
