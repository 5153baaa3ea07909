import type { ProviderEntry } from '../registry.ts';
import { cohereAdapter } from './cohere-adapter.ts';

export const cohereProvider: ProviderEntry = {
  adapter: cohereAdapter,
  defaultBaseUrl: 'https://api.cohere.com',
};
