import type { RouteGroup } from '../http/route.ts';
import { anthropicRoutes } from './anthropic/anthropic-routes.ts';
import { bedrockRoutes } from './bedrock/bedrock-routes.ts';
import { genAiRoutes } from './genai/genai-routes.ts';
import { liteLlmRoutes } from './litellm/litellm-routes.ts';
import { openAiOperations, openAiRoutes } from './openai/openai-routes.ts';
import { passthroughRoutes } from './passthrough/passthrough-routes.ts';
import type { SurfaceDependencies } from './shared/surface-call.ts';

/**
 * The compatibility surfaces (SPEC.md "What the service does" 5, endpoint note 8) and the pass-through
 * family (endpoint note 7): one route module each.
 */
export function surfaceRoutes(dependencies: SurfaceDependencies): RouteGroup[] {
  const openAi = openAiOperations(dependencies, { defaultProvider: 'openai' });
  return [
    openAiRoutes(dependencies),
    anthropicRoutes(dependencies),
    genAiRoutes(dependencies),
    liteLlmRoutes(dependencies),
    bedrockRoutes(dependencies),
    // `/v1/responses` and `/v1/embeddings` for every provider that can serve them (issue 10).
    {
      routes: passthroughRoutes(dependencies, {
        '/responses': openAi['/responses'],
        '/embeddings': openAi['/embeddings'],
      }),
    },
  ];
}
