import { resolveSecret } from '@gw/shared';
import { z } from 'zod';
import type { ResolvedKey } from '../adapter.ts';
import { modelPathSegment } from '../gemini/gemini-adapter.ts';
import { misconfigured, parseKeyConfig } from '../key-config.ts';

/**
 * Used when `network_config.base_url` is not set. It is also the global endpoint; a key in any other region
 * is sent to that region's host instead (see vertexBaseUrl).
 */
export const VERTEX_DEFAULT_BASE_URL = 'https://aiplatform.googleapis.com';

/** Project and credentials of one Vertex key, from `key.config`. */
const vertexKeyConfigSchema = z.looseObject({
  /** Falls back to the service account's own `project_id`. */
  project_id: z
    .string()
    .regex(/^[a-z0-9.:-]+$/, 'must look like a Google Cloud project id')
    .optional(),
  /** Restricted to what region names look like: it ends up in a host name. */
  region: z
    .string()
    .regex(/^[a-z0-9-]+$/, 'must look like a Google Cloud region (us-central1, global)')
    .default('us-central1'),
  /** The service-account JSON, or `env.NAME`; when absent, the key's value is the service-account JSON. */
  auth_credentials: z.string().optional(),
});

/** The members of a service-account JSON key file that gw uses. */
export const serviceAccountSchema = z.looseObject({
  client_email: z.string().min(1),
  private_key: z.string().min(1),
  private_key_id: z.string().optional(),
  project_id: z.string().optional(),
  /** Google's token endpoint unless the account names another (private clouds, tests). */
  token_uri: z.url().optional(),
});

export type ServiceAccount = z.infer<typeof serviceAccountSchema>;

export interface VertexKeySettings {
  projectId: string;
  region: string;
  /** The service-account JSON as configured: the token cache tells credential changes by it. */
  credentialsText: string;
  serviceAccount: ServiceAccount;
}

function parseServiceAccount(provider: string, text: string): ServiceAccount {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw misconfigured(
      provider,
      'the key needs a service-account JSON (key config auth_credentials or value)',
    );
  }
  const parsed = serviceAccountSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw misconfigured(
      provider,
      `service account ${issue?.path.join('.') || ''}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

/** The settings of a key, validated; mistakes name the field (never the secret). */
export function readVertexKeySettings(
  provider: string,
  key: ResolvedKey | undefined,
  env: NodeJS.ProcessEnv,
): VertexKeySettings {
  const config = parseKeyConfig(vertexKeyConfigSchema, { provider, key });
  const credentialsText =
    (config.auth_credentials ? resolveSecret(config.auth_credentials, env) : key?.value) ?? '';
  const serviceAccount = parseServiceAccount(provider, credentialsText);
  const projectId = config.project_id ?? serviceAccount.project_id;
  if (!projectId) throw misconfigured(provider, 'key config project_id is required');
  return { projectId, region: config.region, credentialsText, serviceAccount };
}

/**
 * The registry's loader knows one default base URL, but Vertex's host depends on the key's region. So the
 * default is a marker: while the context carries it, calls go to the region's host
 * (`https://{region}-aiplatform.googleapis.com`, the global endpoint for `global`); any other base URL
 * (network_config.base_url: a private endpoint, a test server) is used as it is.
 */
export function vertexBaseUrl(contextBaseUrl: string, region: string): string {
  if (contextBaseUrl.replace(/\/+$/, '') !== VERTEX_DEFAULT_BASE_URL) return contextBaseUrl;
  return region === 'global' ? VERTEX_DEFAULT_BASE_URL : `https://${region}-aiplatform.googleapis.com`;
}

/** `/v1/projects/{p}/locations/{r}/publishers/{publisher}/models/{model}`: the resource a call acts on. */
export function vertexModelPath(
  settings: Pick<VertexKeySettings, 'projectId' | 'region'>,
  publisher: 'google' | 'anthropic',
  model: string,
): string {
  return `/v1/projects/${settings.projectId}/locations/${settings.region}/publishers/${publisher}/models/${modelPathSegment(model)}`;
}
