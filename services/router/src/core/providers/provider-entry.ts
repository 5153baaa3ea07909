import type { ProviderAdapter } from './adapter.ts';
import type { PassthroughDescriptor } from './passthrough-descriptor.ts';

/** What a built-in provider plugs into the registry (`registry.ts`). */
export interface ProviderEntry {
  adapter: ProviderAdapter;
  /** Used when `network_config.base_url` is not set (absent when the provider requires one). */
  defaultBaseUrl?: string;
  /** The pass-through operations it offers and how (none when absent). */
  passthrough?: PassthroughDescriptor;
}
