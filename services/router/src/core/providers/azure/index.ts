import type { ProviderEntry } from '../provider-entry.ts';
import { azureAdapter } from './azure-adapter.ts';
import { azurePassthrough } from './azure-passthrough.ts';

/** No default base URL: each key's `config.endpoint` (or `network_config.base_url`) names the resource. */
export const azureProvider: ProviderEntry = { adapter: azureAdapter, passthrough: azurePassthrough };
