// Shared set-up of the surface tests: fake upstreams of several providers, and a gateway (embedded or
// cluster) whose providers point at them, with one virtual key allowed everything.
import {
  type FakeOpenAi,
  type FakeUpstream,
  type GatewayConfigInput,
  type LaunchedGateway,
  startCluster,
  startEmbedded,
  startFakeAnthropic,
  startFakeGemini,
  startFakeOpenAi,
} from '@gw/testkit';

export const VIRTUAL_KEY = 'sk-gw-surfaces000000000000000000000000000000000';
/** The gateway's own provider keys: what the fakes must receive, never the virtual key. */
export const PROVIDER_KEYS = { openai: 'sk-openai-gw', anthropic: 'sk-ant-gw', gemini: 'gemini-gw-key' };

export interface SurfaceFakes {
  openai: FakeOpenAi;
  anthropic: FakeUpstream;
  gemini: FakeUpstream;
}

export async function startFakes(): Promise<SurfaceFakes> {
  const [openai, anthropic, gemini] = await Promise.all([
    startFakeOpenAi(),
    startFakeAnthropic(),
    startFakeGemini(),
  ]);
  return { openai, anthropic, gemini };
}

export async function closeFakes(fakes: SurfaceFakes | undefined): Promise<void> {
  await Promise.all([fakes?.openai.close(), fakes?.anthropic.close(), fakes?.gemini.close()]);
}

export function surfaceConfig(
  fakes: SurfaceFakes,
  client: GatewayConfigInput['client'] = {},
): GatewayConfigInput {
  const network = (url: string) => ({ base_url: url, max_retries: 0 });
  return {
    client: { enforce_virtual_keys: true, ...client },
    providers: {
      openai: { keys: [{ value: PROVIDER_KEYS.openai }], network_config: network(fakes.openai.url) },
      anthropic: { keys: [{ value: PROVIDER_KEYS.anthropic }], network_config: network(fakes.anthropic.url) },
      gemini: { keys: [{ value: PROVIDER_KEYS.gemini }], network_config: network(fakes.gemini.url) },
    },
    governance: {
      virtual_keys: [
        {
          id: 'vk-surfaces',
          name: 'surfaces',
          value: VIRTUAL_KEY,
          provider_configs: ['openai', 'anthropic', 'gemini'].map((provider) => ({
            provider,
            allowed_models: ['*'],
          })),
        },
      ],
    },
  };
}

/**
 * A surface config with a `bedrock` provider (one key with these credentials, at the fake's URL, no retries)
 * that the virtual key may use for any model.
 */
export function withBedrock(
  config: GatewayConfigInput,
  bedrock: { url: string; credentials: { accessKeyId: string; secretAccessKey: string } },
): GatewayConfigInput {
  const { accessKeyId, secretAccessKey } = bedrock.credentials;
  return {
    ...config,
    providers: {
      ...config.providers,
      bedrock: {
        keys: [{ config: { access_key: accessKeyId, secret_key: secretAccessKey, region: 'us-east-1' } }],
        network_config: { base_url: bedrock.url, max_retries: 0 },
      },
    },
    governance: {
      virtual_keys: config.governance!.virtual_keys!.map((key) => ({
        ...key,
        provider_configs: [...(key.provider_configs ?? []), { provider: 'bedrock', allowed_models: ['*'] }],
      })),
    },
  };
}

export const MODES = [
  ['embedded', (config: GatewayConfigInput) => startEmbedded({ config })],
  ['cluster', (config: GatewayConfigInput) => startCluster({ config })],
] as const satisfies ReadonlyArray<
  readonly [string, (config: GatewayConfigInput) => Promise<LaunchedGateway>]
>;
