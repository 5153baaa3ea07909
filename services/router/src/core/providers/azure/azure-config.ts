import { z } from 'zod';
import type { AdapterContext } from '../adapter.ts';
import { parseKeyConfig } from '../key-config.ts';

/** The API version gw speaks when a key names none: the GA version its request and answer shapes follow. */
const AZURE_DEFAULT_API_VERSION = '2024-10-21';

/** Settings of one Azure OpenAI key, from `key.config`. */
export const azureKeyConfigSchema = z.looseObject({
  /** `https://<resource>.openai.azure.com`; without it the provider's base URL is used. */
  endpoint: z.url().optional(),
  /** Model name → deployment name; a model without an entry is its own deployment name. */
  deployments: z.record(z.string(), z.string().min(1)).default({}),
  api_version: z.string().min(1).default(AZURE_DEFAULT_API_VERSION),
  /** `api-key`: the key's value is a resource key; `entra`: it is a Microsoft Entra ID access token. */
  auth: z.enum(['api-key', 'entra']).default('api-key'),
});

export type AzureKeyConfig = z.infer<typeof azureKeyConfigSchema>;

/** The key's settings, validated; mistakes name the field. */
export function readAzureKeyConfig(context: AdapterContext): AzureKeyConfig {
  return parseKeyConfig(azureKeyConfigSchema, { provider: context.provider, key: context.key });
}
