import type { ProviderEntry } from '../provider-entry.ts';
import { anthropicAdapter } from './anthropic-adapter.ts';
import { anthropicPassthrough } from './anthropic-passthrough.ts';

export { createAnthropicAdapter } from './anthropic-adapter.ts';
export type { AnthropicRequestBody } from './convert-to-anthropic-request.ts';

export const anthropicProvider: ProviderEntry = {
  adapter: anthropicAdapter,
  defaultBaseUrl: 'https://api.anthropic.com',
  passthrough: anthropicPassthrough,
};
