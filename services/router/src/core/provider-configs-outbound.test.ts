// Provider URLs written through the admin API and the outbound address policy: every notation of a metadata,
// link-local, unspecified or (unless allowed) private address is refused, and nothing is stored. No request is
// made: literal addresses are classified, and names here are refused before they are resolved.
import { GatewayError, outboundPolicy, secretReferenceRule, silentLogger } from '@gw/shared';
import { MemoryStore } from '@gw/shared/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProviderConfigs } from './provider-configs.ts';

describe('provider URLs and the outbound address policy', () => {
  let store: MemoryStore;
  let providers: ProviderConfigs;
  let allowing: ProviderConfigs;

  beforeAll(async () => {
    store = await MemoryStore.open();
    const dependencies = {
      store,
      logger: silentLogger(),
      environment: {},
      secretReferences: secretReferenceRule({}),
    };
    providers = await ProviderConfigs.start({ ...dependencies, outbound: outboundPolicy() });
    allowing = await ProviderConfigs.start({
      ...dependencies,
      outbound: outboundPolicy({ allowed_addresses: ['10.0.0.0/8'] }),
    });
  });
  afterAll(async () => {
    await providers.close();
    await allowing.close();
    await store.close();
  });

  const custom = (fields: Record<string, unknown>) => ({
    keys: [{ value: 'sk-plain-value-0000' }],
    custom_provider_config: { base_provider: 'openai' },
    ...fields,
  });
  const refusal = async (configs: ProviderConfigs, name: string, input: unknown) => {
    try {
      await configs.put(name, input, { create: true });
    } catch (error) {
      expect(error).toBeInstanceOf(GatewayError);
      return error as GatewayError;
    }
    return undefined;
  };

  it.each([
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://0xa9fea9fe/',
    'http://2852039166/',
    'http://169.254.43518/',
    'http://0251.0376.0251.0376/',
    'http://0xa9.0xfe.0xa9.0xfe/',
    'http://metadata.google.internal./',
    'http://[fe80::1]/',
    'http://0.0.0.0:6379/',
    'http://10.0.0.1/',
    'http://[fd00::1]/',
  ])('refuses base_url %s', async (url) => {
    const error = await refusal(providers, 'evil', custom({ network_config: { base_url: url } }));
    expect(error).toMatchObject({
      status: 400,
      param: 'network_config.base_url',
      code: 'outbound_address_refused',
    });
    expect(await store.get('providers', 'evil')).toBeUndefined();
  });

  it('refuses a Vertex key file whose token_uri is a metadata address', async () => {
    const keyFile = JSON.stringify({
      type: 'service_account',
      token_uri: 'http://[::ffff:169.254.169.254]/token',
    });
    const error = await refusal(providers, 'vertex', { keys: [{ value: keyFile }] });
    expect(error).toMatchObject({ status: 400, param: 'keys[0].value.token_uri' });
  });

  it('allows loopback by default, and a private range the config file allows', async () => {
    expect(
      await refusal(providers, 'local', custom({ network_config: { base_url: 'http://127.0.0.1:11434' } })),
    ).toBeUndefined();
    expect(
      await refusal(allowing, 'corp', custom({ network_config: { base_url: 'http://10.1.2.3:8000' } })),
    ).toBeUndefined();
    expect(
      await refusal(
        allowing,
        'meta',
        custom({ network_config: { base_url: 'http://[::ffff:169.254.169.254]/' } }),
      ),
    ).toMatchObject({ status: 400 });
  });
});
