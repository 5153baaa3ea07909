import type { ProviderEntry } from '../registry.ts';
import { bedrockAdapter } from './bedrock-adapter.ts';
import { BEDROCK_DEFAULT_BASE_URL } from './bedrock-config.ts';

export { type BedrockAdapterOptions, bedrockAdapter, createBedrockAdapter } from './bedrock-adapter.ts';
export { type AwsCredentials, type CredentialSource, standardCredentialChain } from './bedrock-auth.ts';
export { BEDROCK_DEFAULT_BASE_URL, bedrockKeyConfigSchema } from './bedrock-config.ts';
export { bedrockStreamException, readBedrockErrorMessage } from './bedrock-error.ts';
export { convertToBedrockMessages } from './convert-to-bedrock-messages.ts';
export { convertToBedrockRequest } from './convert-to-bedrock-request.ts';
export { mapBedrockFinishReason } from './map-bedrock-finish-reason.ts';
export { mapBedrockResponse } from './map-bedrock-response.ts';
export { mapBedrockStream } from './map-bedrock-stream.ts';
export { mapBedrockUsage } from './map-bedrock-usage.ts';
export { readEventStream } from './read-event-stream.ts';

/**
 * `defaultBaseUrl` is us-east-1's endpoint because the registry wants one; while a context still carries
 * it, calls go to `https://bedrock-runtime.<region>.amazonaws.com` of the key's region instead. A
 * configured `network_config.base_url` (VPC endpoint, test server) is used as it is.
 */
export const bedrockProvider: ProviderEntry = {
  adapter: bedrockAdapter,
  defaultBaseUrl: BEDROCK_DEFAULT_BASE_URL,
};
