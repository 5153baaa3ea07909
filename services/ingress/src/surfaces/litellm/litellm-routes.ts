import { methodNotAllowed, noEndpoint } from '@gw/shared';
import type { Route, RouteHandler } from '../../core/route.ts';
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
export function liteLlmRoutes(dependencies: SurfaceDependencies): Route[] {
  const operations = openAiOperations(dependencies, {
    defaultProvider: 'openai',
    aliases: LITELLM_PROVIDER_ALIASES,
  });
  const handler: RouteHandler = async (request, response, context) => {
    let path = context.path.slice('/litellm'.length);
    if (path.startsWith('/v1/')) path = path.slice(3);
    const operation = path === '/responses' ? undefined : operations[path];
    if (!operation) throw noEndpoint(request.method, context.path);
    if (request.method !== 'POST')
      throw methodNotAllowed({ method: request.method, path: context.path, allowed: 'POST' });
    await operation(request, response, context);
  };
  return [{ method: ['GET', 'POST', 'DELETE'], prefix: '/litellm', handler }];
}
