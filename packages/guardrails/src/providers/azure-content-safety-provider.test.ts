import { azureContentSafetyProfileSchema } from '@gw/shared';
import { startFakeAzureContentSafety } from '@gw/testkit';
import { runGuardrailProviderContract } from '@gw/testkit/guardrail-contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAzureContentSafetyProvider } from './azure-content-safety-provider.ts';

describe('Azure AI Content Safety provider (text:analyze against a fake)', () => {
  let fake: Awaited<ReturnType<typeof startFakeAzureContentSafety>>;
  beforeAll(async () => {
    fake = await startFakeAzureContentSafety({ keys: ['azure-key'], blocklists: { words: ['codeword'] } });
  });
  afterAll(() => fake?.close());

  const provider = (key: string, fields: Record<string, unknown> = {}) =>
    createAzureContentSafetyProvider(
      azureContentSafetyProfileSchema.parse({
        id: 'azure',
        type: 'azure_content_safety',
        endpoint: `${fake.url}/`,
        api_key: key,
        ...fields,
      }),
      { environment: { AZURE_KEY: 'azure-key' } },
    );
  const check = (texts: string[], fields: Record<string, unknown> = {}) =>
    provider('env.AZURE_KEY', fields).check({
      side: 'input',
      texts,
      priorLength: 0,
      rule: 'r',
      metadata: {} as never,
      signal: new AbortController().signal,
    });

  runGuardrailProviderContract({
    create: () => ({ provider: provider('env.AZURE_KEY'), refused: provider('wrong-key') }),
    emails: 'ignores',
    remote: true,
  });

  it('sends the key, the api-version and the settings, and reads blocklist hits', async () => {
    const verdict = await check(['say the codeword'], {
      blocklist_names: ['words'],
      categories: ['Violence'],
    });
    expect(verdict.detections).toEqual([
      { category: 'blocklist:words', severity: 'high', text: 0, excerpt: 'codeword' },
    ]);
    const last = fake.last();
    expect(last.path).toBe('/contentsafety/text:analyze?api-version=2024-09-01');
    expect(last.headers['ocp-apim-subscription-key']).toBe('azure-key');
    expect(last.body).toEqual({
      text: 'say the codeword',
      categories: ['Violence'],
      blocklistNames: ['words'],
      haltOnBlocklistHit: false,
      outputType: 'FourSeverityLevels',
    });
  });

  it('blocks at the threshold, and splits texts past 10k characters', async () => {
    expect((await check(['FORBIDDEN'], { severity_threshold: 7 })).detections).toEqual([]);
    const long = `${'a'.repeat(10_000)}FORBIDDEN`;
    const before = fake.requests.length;
    expect((await check([long])).detections).toEqual([
      { category: 'Violence', severity: 'high', text: 0, excerpt: 'Violence severity 6' },
    ]);
    expect(fake.requests.length - before).toBe(2);
  });
});
