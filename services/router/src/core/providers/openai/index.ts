import { PASSTHROUGH_OPERATIONS } from '@gw/shared';
import { openAiStylePassthrough } from '../passthrough-descriptor.ts';
import type { ProviderEntry } from '../provider-entry.ts';
import { openAiAdapter } from './openai-adapter.ts';

/** OpenAI offers the whole pass-through family. */
export const openAiProvider: ProviderEntry = {
  adapter: openAiAdapter,
  defaultBaseUrl: 'https://api.openai.com',
  passthrough: openAiStylePassthrough(PASSTHROUGH_OPERATIONS),
};
