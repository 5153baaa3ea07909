import type { BaseFormat, BuiltInProvider } from '@gw/shared';
import type { ProviderAdapter } from './adapter.ts';
import { openAiAdapter } from './openai/openai-adapter.ts';

export interface ProviderEntry {
  adapter: ProviderAdapter;
  /** Used when `network_config.base_url` is not set (absent when the provider requires one). */
  defaultBaseUrl?: string;
}

/**
 * The adapters of gw by provider name. A provider plugs in here and in the contract suite
 * (packages/testkit/src/provider-contract.ts), nowhere else.
 */
export const BUILT_IN_PROVIDERS: Partial<Record<BuiltInProvider, ProviderEntry>> = {
  openai: { adapter: openAiAdapter, defaultBaseUrl: 'https://api.openai.com' },
};

/** Adapters a custom provider can be built over, by base wire format. */
export const BASE_FORMAT_ADAPTERS: Partial<Record<BaseFormat, ProviderAdapter>> = {
  openai: openAiAdapter,
};
