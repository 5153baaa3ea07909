import type { ProviderEntry } from '../registry.ts';
import { anthropicAdapter } from './anthropic-adapter.ts';
import { anthropicPassthrough } from './anthropic-passthrough.ts';

export {
  ANTHROPIC_VERSION,
  type AnthropicAdapterOptions,
  anthropicAdapter,
  anthropicHeaders,
  createAnthropicAdapter,
} from './anthropic-adapter.ts';
export { anthropicStreamError, readAnthropicErrorMessage } from './anthropic-error.ts';
export { convertToAnthropicMessages } from './convert-to-anthropic-messages.ts';
export {
  type AnthropicRequestBody,
  convertToAnthropicRequest,
  DEFAULT_MAX_TOKENS,
} from './convert-to-anthropic-request.ts';
export { mapAnthropicFinishReason } from './map-anthropic-finish-reason.ts';
export { mapAnthropicResponse } from './map-anthropic-response.ts';
export { mapAnthropicStream } from './map-anthropic-stream.ts';
export { mapAnthropicUsage } from './map-anthropic-usage.ts';

export const anthropicProvider: ProviderEntry = {
  adapter: anthropicAdapter,
  defaultBaseUrl: 'https://api.anthropic.com',
  passthrough: anthropicPassthrough,
};
