import { openAiStylePassthrough } from '../passthrough-descriptor.ts';
import type { ProviderEntry } from '../provider-entry.ts';
import { MISTRAL_DEFAULT_BASE_URL, mistralAdapter } from './mistral-adapter.ts';

export const mistralProvider: ProviderEntry = {
  adapter: mistralAdapter,
  defaultBaseUrl: MISTRAL_DEFAULT_BASE_URL,
  // Transcriptions (Voxtral) answer their audio seconds in `usage.prompt_audio_seconds`, which settlement reads.
  passthrough: openAiStylePassthrough(['models', 'embeddings', 'audio_transcriptions', 'files']),
};
