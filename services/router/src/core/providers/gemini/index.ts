import { joinUrl } from '../passthrough-descriptor.ts';
import type { ProviderEntry } from '../provider-entry.ts';
import { GEMINI_DEFAULT_BASE_URL, geminiAdapter } from './gemini-adapter.ts';

export const geminiProvider: ProviderEntry = {
  adapter: geminiAdapter,
  defaultBaseUrl: GEMINI_DEFAULT_BASE_URL,
  // Gemini's models list only; generate-content is the /genai surface's, governed and translated.
  passthrough: {
    operations: ['models'],
    url: ({ baseUrl, path }) => joinUrl(baseUrl, `/v1beta${path}`),
    auth: (key): Record<string, string> => (key?.value ? { 'x-goog-api-key': key.value } : {}),
  },
};
