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
import { openAiProvider } from './openai/index.ts';
import type { ProviderEntry } from './provider-entry.ts';
import { sglProvider } from './sgl/index.ts';
import { vertexProvider } from './vertex/index.ts';

/**
 * The adapters of gw by provider name. A provider plugs in here and in the contract suite
 * (packages/testkit/src/provider-contract/, `@gw/testkit/provider-contract`), nowhere else.
 */
export const BUILT_IN_PROVIDERS: Record<BuiltInProvider, ProviderEntry> = {
  openai: openAiProvider,
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
  openai: openAiProvider.adapter,
  anthropic: anthropicProvider.adapter,
  bedrock: bedrockProvider.adapter,
  cohere: cohereProvider.adapter,
  gemini: geminiProvider.adapter,
};
