import { openAiStylePassthrough } from '../passthrough-descriptor.ts';
import type { ProviderEntry } from '../provider-entry.ts';
import { GROQ_DEFAULT_BASE_URL, groqAdapter } from './groq-adapter.ts';

/**
 * A provider that supports only models, completions, chat, responses, speech and
 * transcriptions in pass-through (its default base URL already ends in `/openai`).
 */
export const groqProvider: ProviderEntry = {
  adapter: groqAdapter,
  defaultBaseUrl: GROQ_DEFAULT_BASE_URL,
  passthrough: openAiStylePassthrough([
    'models',
    'completions',
    'responses',
    'audio_speech',
    'audio_transcriptions',
  ]),
};
