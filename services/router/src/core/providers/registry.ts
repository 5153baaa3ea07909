import type { BaseFormat, BuiltInProvider } from '@gw/shared';
import type { ProviderAdapter } from './adapter.ts';
import { anthropicProvider } from './anthropic/index.ts';
import { azureProvider } from './azure/index.ts';
import { bedrockProvider } from './bedrock/index.ts';
import { cohereProvider } from './cohere/index.ts';
import { geminiProvider } from './gemini/index.ts';
import { groqProvider } from './groq/index.ts';
import { mistralProvider } from './mistral/index.ts';
import { ollamaProvider } from './ollama/index.ts';
import { openAiAdapter } from './openai/openai-adapter.ts';
import { sglProvider } from './sgl/index.ts';
import { vertexProvider } from './vertex/index.ts';

export interface ProviderEntry {
  adapter: ProviderAdapter;
  /** Used when `network_config.base_url` is not set (absent when the provider requires one). */
  defaultBaseUrl?: string;
}

/**
 * The adapters of gw by provider name. A provider plugs in here and in the contract suite
 * (packages/testkit/src/provider-contract.ts), nowhere else.
 */
export const BUILT_IN_PROVIDERS: Record<BuiltInProvider, ProviderEntry> = {
  openai: { adapter: openAiAdapter, defaultBaseUrl: 'https://api.openai.com' },
  azure: azureProvider,
  anthropic: anthropicProvider,
  bedrock: bedrockProvider,
  cohere: cohereProvider,
  vertex: vertexProvider,
  mistral: mistralProvider,
  ollama: ollamaProvider,
  groq: groqProvider,
  sgl: sglProvider,
  gemini: geminiProvider,
};

/** Adapters a custom provider can be built over, by base wire format. */
export const BASE_FORMAT_ADAPTERS: Record<BaseFormat, ProviderAdapter> = {
  openai: openAiAdapter,
  anthropic: anthropicProvider.adapter,
  bedrock: bedrockProvider.adapter,
  cohere: cohereProvider.adapter,
  gemini: geminiProvider.adapter,
};
