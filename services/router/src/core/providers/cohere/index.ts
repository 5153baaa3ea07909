import type { ProviderEntry } from '../provider-entry.ts';
import { cohereAdapter } from './cohere-adapter.ts';

export const cohereProvider: ProviderEntry = {
  adapter: cohereAdapter,
  defaultBaseUrl: 'https://api.cohere.com',
};
