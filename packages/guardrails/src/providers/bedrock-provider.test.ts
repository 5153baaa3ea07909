import { bedrockProfileSchema } from '@gw/shared';
import { applyGuardrailAnswer, startFakeBedrock } from '@gw/testkit';
import { runGuardrailProviderContract } from '@gw/testkit/guardrail-contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBedrockProvider } from './bedrock-provider.ts';

describe('Bedrock Guardrails provider (ApplyGuardrail against a SigV4-checking fake)', () => {
  let fake: Awaited<ReturnType<typeof startFakeBedrock>>;
  beforeAll(async () => {
    fake = await startFakeBedrock({
      credentials: {
        AKIDGUARD: { secretAccessKey: 'guard-secret' },
        AKIDROTATED: { secretAccessKey: 'rotated-secret' },
      },
      answer: applyGuardrailAnswer,
    });
  });
  afterAll(() => fake?.close());

  const provider = (secret: string) =>
    createBedrockProvider(
      bedrockProfileSchema.parse({
        id: 'bedrock',
        type: 'bedrock',
        region: 'us-east-1',
        guardrail_id: 'arn:aws:bedrock:us-east-1:123456789012:guardrail/abc123',
        version: '1',
        access_key: 'AKIDGUARD',
        secret_key: secret,
        endpoint: fake.url,
      }),
      { environment: { GUARD_SECRET: 'guard-secret' } },
    );

  runGuardrailProviderContract({
    create: () => ({ provider: provider('env.GUARD_SECRET'), refused: provider('wrong-secret') }),
    emails: 'rewrites',
    remote: true,
  });

  it('signs ApplyGuardrail for the guardrail and version, and sends the side as source', async () => {
    await provider('guard-secret').check({
      side: 'output',
      texts: ['fine', ''],
      priorLength: 0,
      rule: 'r',
      metadata: {} as never,
      signal: new AbortController().signal,
    });
    const last = fake.requests.at(-1)!;
    expect(last.path).toBe(
      '/guardrail/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Aguardrail%2Fabc123/version/1/apply',
    );
    expect(last.auth).toMatchObject({ kind: 'sigv4', accessKeyId: 'AKIDGUARD', region: 'us-east-1' });
    expect(last.body).toEqual({ source: 'OUTPUT', content: [{ text: { text: 'fine' } }] });
  });

  it('signs with rotated credentials of a secret manager from the next check on', async () => {
    const values: Record<string, string> = {
      'vault.secret/guard#access_key': 'AKIDGUARD',
      'vault.secret/guard#secret_key': 'guard-secret',
    };
    const rotating = createBedrockProvider(
      bedrockProfileSchema.parse({
        id: 'bedrock',
        type: 'bedrock',
        region: 'us-east-1',
        guardrail_id: 'g1',
        version: '1',
        access_key: 'vault.secret/guard#access_key',
        secret_key: 'vault.secret/guard#secret_key',
        endpoint: fake.url,
      }),
      { environment: {}, secrets: { lookup: (reference) => values[reference] } },
    );
    const check = () =>
      rotating.check({
        side: 'input',
        texts: ['fine'],
        priorLength: 0,
        rule: 'r',
        metadata: {} as never,
        signal: new AbortController().signal,
      });
    await check();
    expect(fake.requests.at(-1)?.auth).toMatchObject({ kind: 'sigv4', accessKeyId: 'AKIDGUARD' });
    values['vault.secret/guard#access_key'] = 'AKIDROTATED';
    values['vault.secret/guard#secret_key'] = 'rotated-secret';
    await check();
    expect(fake.requests.at(-1)?.auth).toMatchObject({ kind: 'sigv4', accessKeyId: 'AKIDROTATED' });
  });
});
