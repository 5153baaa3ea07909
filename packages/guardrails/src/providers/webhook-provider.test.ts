import { webhookProfileSchema } from '@gw/shared';
import { startFakeGuardrailWebhook } from '@gw/testkit';
import { runGuardrailProviderContract } from '@gw/testkit/guardrail-contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookProvider } from './webhook-provider.ts';

describe('webhook provider (HMAC-signed POST against a fake)', () => {
  let fake: Awaited<ReturnType<typeof startFakeGuardrailWebhook>>;
  beforeAll(async () => {
    fake = await startFakeGuardrailWebhook({ secret: 'hook-secret' });
  });
  afterAll(() => fake?.close());

  const provider = (secret: string) =>
    createWebhookProvider(
      webhookProfileSchema.parse({
        id: 'hook',
        type: 'webhook',
        url: `${fake.url}/check`,
        secret,
        headers: { 'x-tenant': 'a', 'x-receiver-auth': 'env.HOOK_AUTH' },
      }),
      { environment: { HOOK_SECRET: 'hook-secret', HOOK_AUTH: 'receiver-auth-value' } },
    );

  runGuardrailProviderContract({
    create: () => ({ provider: provider('env.HOOK_SECRET'), refused: provider('wrong-secret') }),
    emails: 'rewrites',
    remote: true,
  });

  const check = (texts: string[]) =>
    provider('hook-secret').check({
      side: 'input',
      texts,
      priorLength: 0,
      rule: 'r1',
      metadata: { model: 'gpt-4o', headers: {} } as never,
      signal: new AbortController().signal,
    });

  it("reads a violation's text as docs/guardrails.md writes it (the offending text) and as an index", async () => {
    // Documented: `text` is the offending text; it names the text sent that holds it, and is the excerpt.
    expect((await check(['fine', 'a BANNED word'])).detections).toEqual([
      { category: 'banned_word', severity: 'high', text: 1, excerpt: 'BANNED' },
    ]);
    // What gw read before: `text` the index of the text sent.
    expect((await check(['fine', 'a FORBIDDEN plan'])).detections).toEqual([
      { category: 'forbidden_topic', severity: 'high', text: 1, excerpt: 'FORBIDDEN' },
    ]);
  });

  it('posts the texts, the side and the metadata without headers, signed', async () => {
    await provider('hook-secret').check({
      side: 'output',
      texts: ['fine'],
      priorLength: 0,
      rule: 'r1',
      metadata: { model: 'gpt-4o', headers: { secret: 'x' }, virtual_key: 'vk' } as never,
      signal: new AbortController().signal,
    });
    const last = fake.last();
    expect(last.headers['x-tenant']).toBe('a');
    // A header value written as a reference (Admin's, through the API) is read at the call.
    expect(last.headers['x-receiver-auth']).toBe('receiver-auth-value');
    expect(last.headers['x-gw-signature']).toMatch(/^sha256=[0-9a-f]{64}$/);
    expect(last.body).toMatchObject({
      version: 1,
      rule: 'r1',
      profile: 'hook',
      side: 'output',
      texts: ['fine'],
    });
    expect(JSON.stringify(last.body)).not.toContain('secret');
  });
});
