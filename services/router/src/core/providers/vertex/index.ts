import type { ProviderEntry } from '../provider-entry.ts';
import { vertexAdapter } from './vertex-adapter.ts';
import { VERTEX_DEFAULT_BASE_URL } from './vertex-config.ts';

/** `defaultBaseUrl` is a marker: calls go to the key's regional host unless network_config.base_url is set. */
export const vertexProvider: ProviderEntry = {
  adapter: vertexAdapter,
  defaultBaseUrl: VERTEX_DEFAULT_BASE_URL,
};
