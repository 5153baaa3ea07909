import { resolveSecret } from '@gw/shared';
import { z } from 'zod';
import type { ResolvedKey } from '../adapter.ts';
import { misconfigured, parseKeyConfig } from '../key-config.ts';

/** Used when `network_config.base_url` is not set; swapped for the key's own region (see bedrockBaseUrl). */
export const BEDROCK_DEFAULT_BASE_URL = 'https://bedrock-runtime.us-east-1.amazonaws.com';

/** Credentials and routing of one Bedrock key, from `key.config`. */
const bedrockKeyConfigSchema = z.looseObject({
  /** Falls back to AWS_REGION / AWS_DEFAULT_REGION. Restricted to what region names look like: it ends up in a host name. */
  region: z
    .string()
    .regex(/^[a-z0-9-]+$/, 'must look like an AWS region (us-east-1)')
    .optional(),
  /** Static IAM credentials; both empty means the standard AWS credential chain. `env.NAME` reads the environment. */
  access_key: z.string().default(''),
  secret_key: z.string().default(''),
  session_token: z.string().default(''),
  /** Model alias → Bedrock model id or inference-profile ARN. */
  deployments: z.record(z.string(), z.string().min(1)).default({}),
  /** `sigv4` signs with IAM credentials; `api_key` sends the key's value as a Bedrock API key (Bearer). */
  auth: z.enum(['sigv4', 'api_key']).default('sigv4'),
});

export interface BedrockKeySettings {
  region: string;
  auth: 'sigv4' | 'api_key';
  /** Static credentials; undefined means the credential chain. */
  credentials: { accessKeyId: string; secretAccessKey: string; sessionToken?: string } | undefined;
  deployments: Record<string, string>;
  apiKey: string;
}

/** The settings of a key, validated; mistakes name the field. */
export function readBedrockKeySettings(
  provider: string,
  key: ResolvedKey | undefined,
  env: NodeJS.ProcessEnv,
): BedrockKeySettings {
  const config = parseKeyConfig(bedrockKeyConfigSchema, { provider, key });
  const region = config.region ?? env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'];
  if (!region || !/^[a-z0-9-]+$/.test(region)) {
    throw misconfigured(provider, 'key config region is required (or AWS_REGION in the environment)');
  }
  const secret = (value: string) => (value ? (resolveSecret(value, env) ?? '') : '');
  const accessKeyId = secret(config.access_key);
  const secretAccessKey = secret(config.secret_key);
  const sessionToken = secret(config.session_token);
  if (config.auth === 'sigv4' && Boolean(accessKeyId) !== Boolean(secretAccessKey)) {
    throw misconfigured(provider, 'key config needs both access_key and secret_key, or neither');
  }
  if (config.auth === 'api_key' && !key?.value) {
    throw misconfigured(provider, "key config auth 'api_key' needs the Bedrock API key as the key's value");
  }
  return {
    region,
    auth: config.auth,
    credentials: accessKeyId
      ? { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) }
      : undefined,
    deployments: config.deployments,
    apiKey: key?.value ?? '',
  };
}

/**
 * The registry's loader needs one default base URL, but Bedrock's host depends on the key's region. So the
 * default is a marker: when the context still carries it, the call goes to the key's regional endpoint;
 * any other base URL (network_config.base_url: a VPC endpoint, a test server) is used as it is. (An explicit
 * base_url equal to the us-east-1 default is therefore treated as unset.)
 */
export function bedrockBaseUrl(contextBaseUrl: string, region: string): string {
  if (contextBaseUrl.replace(/\/+$/, '') !== BEDROCK_DEFAULT_BASE_URL) return contextBaseUrl;
  return `https://bedrock-runtime.${region}.amazonaws.com`;
}

/** The model id a call resolves to: an alias of `deployments`, or the name as given. */
export function bedrockModelId(model: string, deployments: Record<string, string>): string {
  return deployments[model] ?? model;
}

/**
 * `/model/{modelId}/{action}` with the model id as one path segment: `:` of versioned ids becomes `%3A`
 * and the `/` of inference-profile ARNs `%2F`, as the AWS SDK sends them.
 */
export function bedrockModelPath(modelId: string, action: 'converse' | 'converse-stream' | 'invoke'): string {
  return `/model/${encodeURIComponent(modelId)}/${action}`;
}
