// PATCH /api/providers/{name} over a memory store: a merge patch onto the stored config, keys merged by id,
// stored secrets kept where the patch leaves a value out or sends its redacted form back.
import { GatewayError, outboundPolicy, secretReferenceRule, silentLogger } from '@gw/shared';
import { MemoryStore } from '@gw/shared/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderConfigs } from './provider-configs.ts';

const SECRET = 'sk-primary-secret-0001';
const SPARE = 'sk-spare-secret-0002';

describe('provider PATCH', () => {
  let store: MemoryStore;
  let providers: ProviderConfigs;
  /** The stored config, secrets and all (what the admin API never shows). */
  const stored = async () => (await store.get('providers', 'openai')) as Record<string, unknown>;

  beforeAll(async () => {
    store = await MemoryStore.open();
    providers = await ProviderConfigs.start({
      store,
      logger: silentLogger(),
      environment: { OPENAI_FROM_ENV: 'sk-from-environment' },
      outbound: outboundPolicy(),
      secretReferences: secretReferenceRule({}),
      seed: {
        openai: {
          keys: [
            { id: 'primary', value: SECRET, weight: 1, models: [] },
            { id: 'spare', value: SPARE, weight: 1, models: [] },
            { id: 'env', value: 'env.OPENAI_FROM_ENV', weight: 1, models: [] },
          ],
          network_config: {
            base_url: 'https://upstream.example/v1',
            timeout_ms: 60_000,
            model_timeouts_ms: {},
            max_retries: 2,
            retry_backoff_initial_ms: 100,
            retry_backoff_max_ms: 5_000,
            extra_headers: { 'x-tenant': 'tenant-secret-header' },
            buffer_size: 1_000,
            drop_excess_requests: false,
          },
        },
      },
    });
  });
  afterAll(async () => {
    await providers.close();
    await store.close();
  });

  it('changes what it names; keys it does not name, and every secret, stay', async () => {
    const answer = await providers.patch('openai', { network_config: { timeout_ms: 12_345 } });
    expect(answer).toMatchObject({ network_config: { timeout_ms: 12_345, max_retries: 2 } });
    expect(JSON.stringify(answer)).not.toContain(SECRET);
    expect(await stored()).toMatchObject({
      keys: [
        { id: 'primary', value: SECRET },
        { id: 'spare', value: SPARE },
        { id: 'env', value: 'env.OPENAI_FROM_ENV' },
      ],
      network_config: { extra_headers: { 'x-tenant': 'tenant-secret-header' } },
    });
  });

  it('merges keys by id: a redacted or absent value keeps the secret, new ids are added, $patch deletes', async () => {
    const read = await providers.get('openai');
    const [primary] = read['keys'] as Array<{ value: string }>;
    const answer = await providers.patch('openai', {
      keys: [
        { id: 'primary', value: primary!.value, weight: 3 },
        { id: 'spare', models: ['gpt-4o-mini'] },
        { id: 'extra', value: 'sk-extra-secret-0003' },
        { id: 'env', $patch: 'delete' },
      ],
      network_config: {
        extra_headers: { 'x-tenant': (read['network_config'] as never)['extra_headers']['x-tenant'] },
      },
    });
    expect((answer['keys'] as Array<{ id: string }>).map((key) => key.id)).toEqual([
      'primary',
      'spare',
      'extra',
    ]);
    expect(await stored()).toMatchObject({
      keys: [
        { id: 'primary', value: SECRET, weight: 3 },
        { id: 'spare', value: SPARE, models: ['gpt-4o-mini'] },
        { id: 'extra', value: 'sk-extra-secret-0003' },
      ],
      network_config: { extra_headers: { 'x-tenant': 'tenant-secret-header' } },
    });
  });

  it('refuses a bad field naming it, a new environment reference, and a delete of no key; nothing changes', async () => {
    const before = await stored();
    const failure = async (patch: Record<string, unknown>) => {
      try {
        await providers.patch('openai', patch);
      } catch (error) {
        expect(error).toBeInstanceOf(GatewayError);
        return (error as GatewayError).message;
      }
      throw new Error('expected a refusal');
    };
    expect(await failure({ network_config: { max_retries: 'three' } })).toContain(
      'network_config.max_retries',
    );
    expect(await failure({ keys: [{ id: 'primary', value: 'env.GATEWAY_ADMIN_TOKEN' }] })).toContain(
      'needs the permission secrets:reference',
    );
    expect(await failure({ keys: [{ id: 'gone', $patch: 'delete' }] })).toContain("no key 'gone'");
    expect(await failure({ keys: { primary: {} } })).toContain('keys: must be a list');
    expect(
      await failure({
        keys: [
          { id: 'spare', value: 'x' },
          { id: 'spare', $patch: 'remove' },
        ],
      }),
    ).toContain('$patch');
    expect(await stored()).toEqual(before);
    await expect(providers.patch('mistral', {})).rejects.toMatchObject({ type: 'not_found' });
  });

  it('gives a new key without an id one no other key has', async () => {
    // Four keys, the fourth named as the fifth would be by position: the next one must not take its id.
    await providers.patch('openai', { keys: [{ id: 'openai-key-4', value: 'sk-named-secret-0004' }] });
    const answer = await providers.patch('openai', { keys: [{ value: 'sk-unnamed-secret-0005' }] });
    expect((answer['keys'] as Array<{ id: string }>).map((key) => key.id)).toEqual([
      'primary',
      'spare',
      'extra',
      'openai-key-4',
      'openai-key-5',
    ]);
  });
});
