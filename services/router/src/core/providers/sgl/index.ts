import type { ProviderEntry } from '../provider-entry.ts';
import { sglAdapter } from './sgl-adapter.ts';

/** No default base URL: `network_config.base_url` says where the SGLang server runs. */
export const sglProvider: ProviderEntry = { adapter: sglAdapter };
