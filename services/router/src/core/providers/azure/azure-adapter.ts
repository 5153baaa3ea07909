import { type AdapterContext, DEFAULT_CAPABILITIES } from '../adapter.ts';
import { createOpenAiCompatibleAdapter, type OpenAiOperation } from '../openai/openai-adapter.ts';
import { readAzureKeyConfig } from './azure-config.ts';

/** Azure's path of each operation under a deployment. */
const AZURE_OPERATION_PATHS: Record<OpenAiOperation, string> = {
  chat: '/chat/completions',
  text: '/completions',
  embeddings: '/embeddings',
};

function azureAuthHeaders(context: AdapterContext): Record<string, string> {
  const value = context.key?.value;
  if (!value) return {};
  return readAzureKeyConfig(context).auth === 'entra'
    ? { authorization: `Bearer ${value}` }
    : { 'api-key': value };
}

/**
 * Azure OpenAI: OpenAI's wire format with its own auth header, a per-key endpoint and deployment paths
 * carrying `api-version`; everything else is the OpenAI adapter.
 */
export const azureAdapter = createOpenAiCompatibleAdapter({
  capabilities: {
    ...DEFAULT_CAPABILITIES,
    operations: ['chat', 'chat_stream', 'text', 'text_stream', 'embeddings'],
  },
  paths: AZURE_OPERATION_PATHS,
  authHeaders: azureAuthHeaders,
  resolveBaseUrl: (context) => readAzureKeyConfig(context).endpoint ?? context.baseUrl,
  resolvePath: (path, model, context) => {
    const config = readAzureKeyConfig(context);
    const deployment = config.deployments[model] ?? model;
    return {
      path: `/openai/deployments/${encodeURIComponent(deployment)}${path}`,
      query: { 'api-version': config.api_version },
    };
  },
  // Azure's Responses API is its v1 API: no api-version, the deployment named as the body's model.
  responses: {
    path: '/openai/v1/responses',
    model: (model, context) => readAzureKeyConfig(context).deployments[model] ?? model,
  },
});
