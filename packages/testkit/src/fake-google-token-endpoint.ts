import { createVerify, generateKeyPairSync } from 'node:crypto';
import { type FakeUpstreamAnswer, type FakeUpstreamRequest, startFakeUpstream } from './fake-upstream.ts';

/** One JWT-bearer exchange the fake received, with the assertion decoded and its signature checked. */
export interface TokenExchange {
  grantType: string | null;
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  /** Whether the assertion is signed by the test service account's private key. */
  signatureValid: boolean;
}

function decodeSegment(segment: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/**
 * Google's OAuth2 token endpoint on loopback, for tests: it verifies each service-account assertion against
 * the public half of a key pair made here, and answers an access token. `serviceAccount` is a key file
 * whose `token_uri` points at it.
 */
export async function startFakeGoogleTokenEndpoint(options: { expiresIn?: number } = {}) {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const exchanges: TokenExchange[] = [];
  const answers: Array<{ status: number; body: unknown }> = [];

  const exchange = (request: FakeUpstreamRequest): FakeUpstreamAnswer => {
    const form = new URLSearchParams(request.raw.toString('utf8'));
    const [header = '', claims = '', signature = ''] = (form.get('assertion') ?? '').split('.');
    const verifier = createVerify('RSA-SHA256');
    verifier.update(`${header}.${claims}`);
    let received: TokenExchange;
    try {
      received = {
        grantType: form.get('grant_type'),
        header: decodeSegment(header),
        claims: decodeSegment(claims),
        signatureValid: verifier.verify(publicKey, Buffer.from(signature, 'base64url')),
      };
    } catch {
      received = { grantType: form.get('grant_type'), header: {}, claims: {}, signatureValid: false };
    }
    exchanges.push(received);
    const answer =
      answers.shift() ??
      (received.signatureValid
        ? {
            status: 200,
            body: {
              access_token: `ya29.test-token-${exchanges.length}`,
              expires_in: options.expiresIn ?? 3599,
              token_type: 'Bearer',
            },
          }
        : { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid JWT Signature.' } });
    return { status: answer.status, json: answer.body };
  };
  const fake = await startFakeUpstream([{ method: 'POST', path: /^\/token$/, answer: exchange }]);
  const tokenUri = `${fake.url}/token`;

  return {
    tokenUri,
    exchanges,
    /** Answers of the next exchanges, in order, in place of a token. */
    enqueue(...scripted: Array<{ status: number; body: unknown }>) {
      answers.push(...scripted);
    },
    /** A service-account key file (as its JSON text) signed by this endpoint's key pair. */
    serviceAccount(overrides: Record<string, unknown> = {}): string {
      return JSON.stringify({
        type: 'service_account',
        project_id: 'sa-project',
        private_key_id: 'f00dfeed',
        private_key: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
        client_email: 'gw-test@sa-project.iam.gserviceaccount.com',
        client_id: '1234567890',
        auth_uri: 'https://accounts.google.com/o/oauth2/auth',
        token_uri: tokenUri,
        ...overrides,
      });
    },
    close: fake.close,
  };
}

export type FakeGoogleTokenEndpoint = Awaited<ReturnType<typeof startFakeGoogleTokenEndpoint>>;
