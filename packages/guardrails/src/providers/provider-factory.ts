import type { GuardrailProfile, OutboundPolicy, SecretLookup } from '@gw/shared';
import type { Dispatcher } from 'undici';
import type { GuardrailProvider } from '../guardrail-types.ts';
import { createBuiltinProvider } from './builtin/builtin-provider.ts';

export interface ProviderOptions {
  /** Where `env.NAME` credentials of profiles resolve (the process's environment, injected by main). */
  environment: NodeJS.ProcessEnv;
  /** Where secret-manager references (`vault.…`: docs/vault.md) resolve: the process's resolver, read at use. */
  secrets?: SecretLookup | undefined;
  /**
   * Where remote profiles may send (the config file's outbound address policy, docs/network.md) and an agent
   * that applies it at every connection; without it (unit tests) they send anywhere.
   */
  outbound?: { policy: OutboundPolicy; dispatcher: Dispatcher } | undefined;
}

/**
 * The provider of a profile. The remote ones are loaded on first use, so a gateway without a Bedrock profile
 * never loads the AWS SDK.
 */
export async function createProvider(
  profile: GuardrailProfile,
  options: ProviderOptions,
): Promise<GuardrailProvider> {
  switch (profile.type) {
    case 'builtin':
      return createBuiltinProvider(profile);
    case 'bedrock': {
      const { createBedrockProvider } = await import('./bedrock-provider.ts');
      return createBedrockProvider(profile, options);
    }
    case 'azure_content_safety': {
      const { createAzureContentSafetyProvider } = await import('./azure-content-safety-provider.ts');
      return createAzureContentSafetyProvider(profile, options);
    }
    case 'webhook': {
      const { createWebhookProvider } = await import('./webhook-provider.ts');
      return createWebhookProvider(profile, options);
    }
  }
}
