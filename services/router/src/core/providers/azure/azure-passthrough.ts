import { bearerAuth, joinUrl, openAiPath, type PassthroughDescriptor } from '../passthrough-descriptor.ts';
import { azureKeyConfigSchema } from './azure-config.ts';

/** Azure OpenAI's v1 API (`/openai/v1/…`) on the key's resource endpoint, with its key or an Entra token. */
export const azurePassthrough: PassthroughDescriptor = {
  operations: [
    'models',
    'completions',
    'responses',
    'embeddings',
    'images_generations',
    'images_edits',
    'audio_speech',
    'audio_transcriptions',
    'files',
    'batches',
  ],
  url: ({ baseUrl, path, operation, key }) => {
    const endpoint = azureKeyConfigSchema.safeParse(key?.config ?? {}).data?.endpoint;
    return joinUrl(endpoint ?? baseUrl, `/openai${openAiPath(path, operation)}`);
  },
  auth: (key) => {
    if (!key?.value) return {};
    const entra = azureKeyConfigSchema.safeParse(key.config).data?.auth === 'entra';
    return entra ? bearerAuth(key) : { 'api-key': key.value };
  },
};
