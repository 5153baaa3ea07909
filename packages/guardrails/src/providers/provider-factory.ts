import type { GuardrailProfile } from '@gw/shared';
import type { GuardrailProvider } from '../guardrail-types.ts';
import { createBuiltinProvider } from './builtin/builtin-provider.ts';
import type { ProviderOptions } from './provider-options.ts';

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
