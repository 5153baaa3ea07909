import { generateKeyPairSync } from 'node:crypto';
import { GatewayError } from '@gw/shared';
import { type FakeGoogleTokenEndpoint, startFakeGoogleTokenEndpoint } from '@gw/testkit';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { serviceAccountSchema } from './vertex-config.ts';
import { VertexTokenSource } from './vertex-token-source.ts';

describe('VertexTokenSource', () => {
  let endpoint: FakeGoogleTokenEndpoint;
  let shortLived: FakeGoogleTokenEndpoint;
  beforeAll(async () => {
    endpoint = await startFakeGoogleTokenEndpoint();
    // google-auth-library refreshes tokens that expire within 5 minutes before using them.
    shortLived = await startFakeGoogleTokenEndpoint({ expiresIn: 60 });
  });
  beforeEach(() => {
    endpoint.exchanges.length = 0;
  });
  afterAll(async () => {
    await endpoint.close();
    await shortLived.close();
  });

  const request = (keyId: string, credentialsText: string) => ({
    provider: 'vertex',
    keyId,
    credentialsText,
    serviceAccount: serviceAccountSchema.parse(JSON.parse(credentialsText)),
  });

  it("exchanges a JWT-bearer assertion signed by the service account's key at its token_uri", async () => {
    const tokens = new VertexTokenSource();
    await expect(tokens.accessToken(request('k1', endpoint.serviceAccount()))).resolves.toBe(
      'ya29.test-token-1',
    );
    expect(endpoint.exchanges).toHaveLength(1);
    const exchange = endpoint.exchanges[0]!;
    expect(exchange.grantType).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    expect(exchange.signatureValid).toBe(true);
    expect(exchange.header).toMatchObject({ alg: 'RS256' });
    expect(exchange.claims).toMatchObject({
      iss: 'gw-test@sa-project.iam.gserviceaccount.com',
      scope: 'https://www.googleapis.com/auth/cloud-platform',
    });
    const { iat, exp } = exchange.claims as { iat: number; exp: number };
    expect(exp - iat).toBe(3600);
  });

  it('keeps the token: sequential and concurrent requests share one exchange', async () => {
    const tokens = new VertexTokenSource();
    const credentials = endpoint.serviceAccount();
    const first = await tokens.accessToken(request('k1', credentials));
    const second = await tokens.accessToken(request('k1', credentials));
    const concurrent = await Promise.all([1, 2, 3].map(() => tokens.accessToken(request('k1', credentials))));
    expect(new Set([first, second, ...concurrent])).toEqual(new Set(['ya29.test-token-1']));
    expect(endpoint.exchanges).toHaveLength(1);

    const fresh = new VertexTokenSource();
    await Promise.all([1, 2, 3].map(() => fresh.accessToken(request('k1', credentials))));
    expect(endpoint.exchanges).toHaveLength(2);
  });

  it('refreshes a token that is about to expire', async () => {
    const tokens = new VertexTokenSource();
    const credentials = shortLived.serviceAccount();
    await tokens.accessToken(request('k1', credentials));
    await tokens.accessToken(request('k1', credentials));
    expect(shortLived.exchanges).toHaveLength(2);
  });

  it('keeps one token per key and starts over when the key gets new credentials', async () => {
    const tokens = new VertexTokenSource();
    const credentials = endpoint.serviceAccount();
    await tokens.accessToken(request('k1', credentials));
    await tokens.accessToken(request('k2', credentials));
    await tokens.accessToken(
      request('k1', endpoint.serviceAccount({ client_email: 'other@sa-project.iam.gserviceaccount.com' })),
    );
    expect(endpoint.exchanges.map((exchange) => exchange.claims['iss'])).toEqual([
      'gw-test@sa-project.iam.gserviceaccount.com',
      'gw-test@sa-project.iam.gserviceaccount.com',
      'other@sa-project.iam.gserviceaccount.com',
    ]);
  });

  it('answers a refused service account as a 401 that is not retried', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const stranger = endpoint.serviceAccount({
      private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    });
    const failure = await new VertexTokenSource()
      .accessToken(request('k1', stranger))
      .catch((error: unknown) => error);
    expect(endpoint.exchanges[0]?.signatureValid).toBe(false);
    expect(failure).toBeInstanceOf(GatewayError);
    expect(failure).toMatchObject({
      type: 'upstream_error',
      status: 401,
      upstream: true,
      provider: 'vertex',
    });
    expect((failure as GatewayError).message).toContain('invalid_grant');
  });

  it('answers an unreachable token endpoint as upstream_unreachable', async () => {
    const unreachable = endpoint.serviceAccount({ token_uri: 'http://127.0.0.1:9/token' });
    const failure = await new VertexTokenSource()
      .accessToken(request('k1', unreachable))
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ type: 'upstream_unreachable', status: 502 });
  });
});
