// Remote guardrail profiles and the outbound address policy: a refused address is never connected to, and an
// endpoint's own text never comes back in an error (only loopback is used here).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  azureContentSafetyProfileSchema,
  bedrockProfileSchema,
  type GuardrailProfile,
  outboundPolicy,
  webhookProfileSchema,
} from '@gw/shared';
import { outboundAgent } from '@gw/shared/outbound';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProvider } from './provider-factory.ts';
import type { ProviderOptions } from './provider-options.ts';

let server: Server;
let port: number;
let hits = 0;

beforeAll(async () => {
  server = createServer((_request, response) => {
    hits += 1;
    response.writeHead(500, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({ error: { code: 'internal secret body', message: 'internal-secret-message' } }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function profiles(host: string): GuardrailProfile[] {
  return [
    webhookProfileSchema.parse({ id: 'hook', type: 'webhook', url: `http://${host}:${port}/check` }),
    azureContentSafetyProfileSchema.parse({
      id: 'azure',
      type: 'azure_content_safety',
      endpoint: `http://${host}:${port}/`,
      api_key: 'plain-key-value',
    }),
    bedrockProfileSchema.parse({
      id: 'bedrock',
      type: 'bedrock',
      region: 'us-east-1',
      guardrail_id: 'arn:aws:bedrock:us-east-1:123456789012:guardrail/abc123',
      version: '1',
      access_key: 'AKIDGUARD',
      secret_key: 'plain-secret-value',
      endpoint: `http://${host}:${port}`,
    }),
  ];
}

async function failureOf(profile: GuardrailProfile, options: ProviderOptions): Promise<string> {
  const provider = await createProvider(profile, options);
  try {
    await provider.check({
      side: 'input',
      texts: ['hello'],
      priorLength: 0,
      rule: 'r',
      metadata: {} as never,
      signal: AbortSignal.timeout(5_000),
    });
  } catch (error) {
    return String((error as Error).message) + String((error as { cause?: Error }).cause?.message ?? '');
  }
  throw new Error('expected a failure');
}

describe('remote guardrail profiles and the outbound address policy', () => {
  it('never carry the endpoint’s text in an error', async () => {
    for (const profile of profiles('127.0.0.1')) {
      const message = await failureOf(profile, { environment: {} });
      expect(message).toMatch(/answered 500|\(HTTP 500\)/);
      expect(message).not.toContain('internal-secret-message');
      expect(message).not.toContain('internal secret body');
    }
  });

  it('do not connect where the policy refuses', async () => {
    const policy = outboundPolicy({ allow_loopback: false });
    const dispatcher = outboundAgent(policy);
    const before = hits;
    for (const host of ['127.0.0.1', '[::ffff:7f00:1]', 'localhost']) {
      for (const profile of profiles(host)) {
        const message = await failureOf(profile, { environment: {}, outbound: { policy, dispatcher } });
        expect(message).toMatch(/is a loopback address/);
      }
    }
    expect(hits).toBe(before);
    await dispatcher.close();
  });
});
