import { openAiStylePassthrough } from '../passthrough-descriptor.ts';
import type { ProviderEntry } from '../provider-entry.ts';
import { MISTRAL_DEFAULT_BASE_URL, mistralAdapter } from './mistral-adapter.ts';

export const mistralProvider: ProviderEntry = {
  adapter: mistralAdapter,
  defaultBaseUrl: MISTRAL_DEFAULT_BASE_URL,
  passthrough: openAiStylePassthrough(['models', 'embeddings', 'files']),
};
