import type { Message } from '@gw/shared';
import { DEFAULT_CAPABILITIES, type ProviderAdapter } from '../adapter.ts';
import { mapDeveloperToSystem } from './map-developer-to-system.ts';
import { createOpenAiCompatibleAdapter } from './openai-adapter.ts';

/**
 * A self-hosted server speaking OpenAI's format (ollama, sglang): every operation, no default location
 * (`network_config.base_url` says where it runs) and no key needed; a key, when configured, goes out as a
 * bearer token (a server behind an authenticating proxy).
 */
export function createLocalOpenAiServerAdapter(): ProviderAdapter {
  return createOpenAiCompatibleAdapter({
    capabilities: {
      ...DEFAULT_CAPABILITIES,
      operations: ['chat', 'chat_stream', 'text', 'text_stream', 'embeddings'],
      authOptional: true,
      requiresBaseUrl: true,
    },
    // Chat templates of open models know system, not OpenAI's newer developer role.
    adjustBody: (body) =>
      Array.isArray(body['messages'])
        ? { ...body, messages: mapDeveloperToSystem(body['messages'] as Message[]) }
        : body,
  });
}
