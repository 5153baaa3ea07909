import type { ProviderEntry } from '../provider-entry.ts';
import { ollamaAdapter } from './ollama-adapter.ts';

/** No default base URL: `network_config.base_url` says where the Ollama server runs. */
export const ollamaProvider: ProviderEntry = { adapter: ollamaAdapter };
