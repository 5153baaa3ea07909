import type { ProviderEntry } from '../registry.ts';
import { GROQ_DEFAULT_BASE_URL, groqAdapter } from './groq-adapter.ts';

export const groqProvider: ProviderEntry = { adapter: groqAdapter, defaultBaseUrl: GROQ_DEFAULT_BASE_URL };
