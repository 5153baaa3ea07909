import { GatewayError, networkConfigSchema } from '@gw/shared';
import { type FakeBedrockRequest, startFakeBedrock } from '@gw/testkit';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { chatAnswer, chatStreamFrames, MODEL_ID } from '../../../testing/fixtures/bedrock-fixtures.ts';
import { UpstreamClient } from '../../upstream-client.ts';
import { type AdapterContext, type ChatInput, chunkOf, type ResolvedKey } from '../adapter.ts';
import { createBedrockAdapter } from './bedrock-adapter.ts';

const STATIC = {
  accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
};
const TEMPORARY = {
  accessKeyId: 'ASIAJEXAMPLEXEG2JICEA',
  secretAccessKey: 'pLGrz2Cmf+AtbvTsNwY0Rb2qbIbMsaM8N5r7XCPR',
  sessionToken: 'IQoJb3JpZ2luX2VjEHsaCXVzLWVhc3QtMSJHMEUCIQD+test//session+token==',
};
const FROM_ENV = {
  accessKeyId: 'AKIAENVEXAMPLE0000001',
  secretAccessKey: 'envSecret/Key+Example0000000000000000000',
};
const API_KEY = 'ABSKQmVkcm9ja0FQSUtleS1leGFtcGxlLWtleQ==';
const PROFILE_ARN =
  'arn:aws:bedrock:us-west-2:123456789012:inference-profile/us.anthropic.claude-3-5-sonnet-20240620-v1:0';

const chatInput: ChatInput = { model: MODEL_ID, messages: [{ role: 'user', content: 'Hi' }], params: {} };

describe('bedrock authentication against a SigV4-verifying fake', () => {
  let fake: Awaited<ReturnType<typeof startFakeBedrock>>;
  let http: UpstreamClient;

  beforeAll(async () => {
    fake = await startFakeBedrock({
      credentials: {
        [STATIC.accessKeyId]: { secretAccessKey: STATIC.secretAccessKey },
        [TEMPORARY.accessKeyId]: {
          secretAccessKey: TEMPORARY.secretAccessKey,
          sessionToken: TEMPORARY.sessionToken,
        },
        [FROM_ENV.accessKeyId]: { secretAccessKey: FROM_ENV.secretAccessKey },
      },
      apiKeys: [API_KEY],
      answer: (request) =>
        request.path.endsWith('/converse-stream') ? { frames: chatStreamFrames } : { json: chatAnswer },
    });
    http = new UpstreamClient({ connections: 4 });
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    fake.requests.length = 0;
    fake.rejections.length = 0;
  });
  afterAll(async () => {
    await http.close();
    await fake.close();
  });

  const context = (key: ResolvedKey, network: Record<string, unknown> = {}): AdapterContext => ({
    provider: 'bedrock',
    http,
    baseUrl: fake.url,
    key,
    network: networkConfigSchema.parse(network),
    timeoutMs: 5_000,
    signal: new AbortController().signal,
    environment: {},
  });
  const staticKey = (config: Record<string, unknown> = {}): ResolvedKey => ({
    id: 'k1',
    value: '',
    config: {
      region: 'us-west-2',
      access_key: STATIC.accessKeyId,
      secret_key: STATIC.secretAccessKey,
      ...config,
    },
  });
  const noChain = () => Promise.reject(new Error('no credential chain in this test'));
  const accepted = (): FakeBedrockRequest => {
    expect(fake.rejections).toEqual([]);
    const request = fake.requests.at(-1);
    if (!request) throw new Error('the fake accepted no request');
    return request;
  };

  it('signs with static credentials; the model id goes out with ":" as %3A and verifies', async () => {
    const adapter = createBedrockAdapter({ credentialChain: noChain });
    const result = await adapter.chat!(chatInput, context(staticKey()));
    expect(result.choices[0]!.message.content).toBe('Hello there');
    const request = accepted();
    expect(request.path).toBe('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse');
    expect(request.auth).toMatchObject({
      kind: 'sigv4',
      accessKeyId: STATIC.accessKeyId,
      region: 'us-west-2',
    });
    expect(request.headers['x-amz-security-token']).toBeUndefined();
  });

  it('is refused with 403 when the secret is wrong (the fake really checks)', async () => {
    const adapter = createBedrockAdapter({ credentialChain: noChain });
    const failure = await adapter.chat!(
      chatInput,
      context(staticKey({ secret_key: 'not-the-secret' })),
    ).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(GatewayError);
    expect((failure as GatewayError).status).toBe(403);
    expect((failure as GatewayError).upstream).toBe(true);
    expect((failure as GatewayError).message).toContain('The request signature we calculated does not match');
    expect(fake.requests).toEqual([]);
  });

  it('signs the stream call too, and the signed stream decodes', async () => {
    const adapter = createBedrockAdapter({ credentialChain: noChain });
    let text = '';
    for await (const piece of adapter.chatStream!(chatInput, context(staticKey()))) {
      text += chunkOf(piece).choices[0]?.delta?.content ?? '';
    }
    expect(text).toBe('Hello thére');
    expect(accepted().path).toBe('/model/anthropic.claude-3-5-sonnet-20240620-v1%3A0/converse-stream');
  });

  it('sends and signs the session token of temporary credentials', async () => {
    const adapter = createBedrockAdapter({ credentialChain: noChain });
    await adapter.chat!(
      chatInput,
      context(
        staticKey({
          access_key: TEMPORARY.accessKeyId,
          secret_key: TEMPORARY.secretAccessKey,
          session_token: TEMPORARY.sessionToken,
        }),
      ),
    );
    const request = accepted();
    expect(request.headers['x-amz-security-token']).toBe(TEMPORARY.sessionToken);
    expect(request.auth.kind === 'sigv4' && request.auth.signedHeaders).toContain('x-amz-security-token');
  });

  it('resolves a deployment alias to an inference-profile ARN, encoded as one path segment', async () => {
    const adapter = createBedrockAdapter({ credentialChain: noChain });
    const result = await adapter.chat!(
      { ...chatInput, model: 'sonnet' },
      context(staticKey({ deployments: { sonnet: PROFILE_ARN } })),
    );
    expect(result.model).toBe('sonnet');
    expect(accepted().path).toBe(`/model/${encodeURIComponent(PROFILE_ARN)}/converse`);
    expect(accepted().path).toContain('inference-profile%2Fus.anthropic');
  });

  it('sends a Bedrock API key as a bearer token, unsigned', async () => {
    const adapter = createBedrockAdapter({ credentialChain: noChain });
    await adapter.chat!(
      chatInput,
      context({ id: 'k2', value: API_KEY, config: { region: 'us-west-2', auth: 'api_key' } }),
    );
    const request = accepted();
    expect(request.auth).toEqual({ kind: 'bearer' });
    expect(request.headers['authorization']).toBe(`Bearer ${API_KEY}`);
    expect(request.headers['x-amz-date']).toBeUndefined();
  });

  it('takes credentials and region from the environment through the AWS credential chain', async () => {
    vi.stubEnv('AWS_ACCESS_KEY_ID', FROM_ENV.accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', FROM_ENV.secretAccessKey);
    vi.stubEnv('AWS_SESSION_TOKEN', '');
    vi.stubEnv('AWS_REGION', 'us-west-2');
    // Nothing past the environment may be tried: no profile files, no instance metadata service.
    vi.stubEnv('AWS_PROFILE', '');
    vi.stubEnv('AWS_CONFIG_FILE', '/nonexistent/aws-config');
    vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', '/nonexistent/aws-credentials');
    vi.stubEnv('AWS_EC2_METADATA_DISABLED', 'true');
    const adapter = createBedrockAdapter();
    // The region comes from the environment the composition root hands down (main's is the process's).
    await adapter.chat!(chatInput, {
      ...context({ id: 'k3', value: '', config: {} }),
      environment: process.env,
    });
    expect(accepted().auth).toMatchObject({
      kind: 'sigv4',
      accessKeyId: FROM_ENV.accessKeyId,
      region: 'us-west-2',
    });
  });

  it('leaves extra headers of the network config unsigned, so they cannot break the signature', async () => {
    const adapter = createBedrockAdapter({ credentialChain: noChain });
    await adapter.chat!(chatInput, context(staticKey(), { extra_headers: { 'x-team': 'search' } }));
    const request = accepted();
    expect(request.headers['x-team']).toBe('search');
    expect(request.auth.kind === 'sigv4' && request.auth.signedHeaders).not.toContain('x-team');
  });

  it('fails as not configured when neither the key nor the chain has credentials', async () => {
    const adapter = createBedrockAdapter({ credentialChain: noChain });
    const failure = await adapter.chat!(
      chatInput,
      context({ id: 'k4', value: '', config: { region: 'us-west-2' } }),
    ).catch((error: unknown) => error);
    expect(failure).toMatchObject({ type: 'provider_not_configured', upstream: false });
    expect(fake.requests).toEqual([]);
  });
});
