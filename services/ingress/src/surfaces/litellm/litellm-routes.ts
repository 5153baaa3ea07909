import type { RouteGroup } from '../../http/route.ts';
import { openAiOperations } from '../openai/openai-routes.ts';
import type { SurfaceDependencies } from '../shared/surface-call.ts';

/** LiteLLM's provider prefixes that differ from gw's provider names. */
const LITELLM_PROVIDER_ALIASES: Readonly<Record<string, string>> = {
  vertex_ai: 'vertex',
  vertex_ai_beta: 'vertex',
  azure_ai: 'azure',
  ollama_chat: 'ollama',
  cohere_chat: 'cohere',
  'text-completion-openai': 'openai',
  mistralai: 'mistral',
};

/**
 * `/litellm/…`: the proxy-library style (`/chat/completions`, `/completions`, `/embeddings`, with or
 * without `/v1`): OpenAI's shapes, the provider named by the model's prefix as LiteLLM names them
 * (`anthropic/claude-…`, `vertex_ai/gemini-…`); a model without a prefix is OpenAI's, as in LiteLLM.
 */
export function liteLlmRoutes(dependencies: SurfaceDependencies): RouteGroup {
  const operations = openAiOperations(dependencies, {
    defaultProvider: 'openai',
    aliases: LITELLM_PROVIDER_ALIASES,
  });
  const routes = ['/litellm', '/litellm/v1'].flatMap((base) =>
    Object.entries(operations)
      // LiteLLM's proxy has no Responses API.
      .filter(([path]) => path !== '/responses')
      .map(([path, handler]) => ({ method: 'POST' as const, path: `${base}${path}`, handler })),
  );
  return { prefix: '/litellm', routes };
}
