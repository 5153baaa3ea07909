import type { ProviderEntry } from '../registry.ts';
import { GEMINI_DEFAULT_BASE_URL, geminiAdapter } from './gemini-adapter.ts';

export { createGeminiAdapter, type GeminiAdapterOptions, type GeminiEndpoint } from './gemini-adapter.ts';

export const geminiProvider: ProviderEntry = {
  adapter: geminiAdapter,
  defaultBaseUrl: GEMINI_DEFAULT_BASE_URL,
};
