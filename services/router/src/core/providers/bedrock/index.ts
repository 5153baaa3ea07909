import type { ProviderEntry } from '../provider-entry.ts';
import { bedrockAdapter } from './bedrock-adapter.ts';
import { BEDROCK_DEFAULT_BASE_URL } from './bedrock-config.ts';

/**
 * `defaultBaseUrl` is us-east-1's endpoint because the registry wants one; while a context still carries
 * it, calls go to `https://bedrock-runtime.<region>.amazonaws.com` of the key's region instead. A
 * configured `network_config.base_url` (VPC endpoint, test server) is used as it is.
 */
export const bedrockProvider: ProviderEntry = {
  adapter: bedrockAdapter,
  defaultBaseUrl: BEDROCK_DEFAULT_BASE_URL,
};
