/**
 * Secret-manager references in config values (docs/vault.md), next to `env.NAME`:
 *
 * - `vault.<mount>/<path>#<field>`: HashiCorp Vault KV v2 (`vault.secret/gw/openai#api_key`)
 * - `aws-sm.<secret-id or ARN>[#<json-field>]`: AWS Secrets Manager
 * - `gcp-sm.projects/<project>/secrets/<name>[/versions/<version>][#<json-field>]`: Google Secret Manager
 * - `azure-kv.<vault-name>/<secret-name>[#<json-field>]`: Azure Key Vault
 *
 * A reference is resolved by the process's secret resolver (@gw/vault) and read at use from its memory cache.
 */
export const SECRET_BACKENDS = ['vault', 'aws-sm', 'gcp-sm', 'azure-kv'] as const;
export type SecretBackendName = (typeof SECRET_BACKENDS)[number];

export interface SecretReference {
  /** The reference as written in the config: its identity in caches, status and errors. */
  text: string;
  backend: SecretBackendName;
  /** What the backend reads: the KV path, secret id, version name or vault/secret pair. */
  secret: string;
  /** A field of the secret (KV data, or the secret's text as a JSON object); the whole text when absent. */
  field: string | undefined;
}

const PREFIX = /^(vault|aws-sm|gcp-sm|azure-kv)\.(.*)$/s;
const FIELD = /^[A-Za-z0-9_.@+=-]{1,256}$/;
const SECRET_SHAPES: Record<SecretBackendName, { pattern: RegExp; form: string }> = {
  vault: {
    pattern: /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_./-]*[A-Za-z0-9_-]$/,
    form: 'vault.<mount>/<path>#<field>',
  },
  'aws-sm': { pattern: /^[A-Za-z0-9/_+=.@:-]{1,2048}$/, form: 'aws-sm.<secret-id>[#<json-field>]' },
  'gcp-sm': {
    pattern: /^projects\/[A-Za-z0-9_-]+\/secrets\/[A-Za-z0-9_-]+(?:\/versions\/(?:latest|[0-9]+))?$/,
    form: 'gcp-sm.projects/<project>/secrets/<name>[/versions/<version>][#<json-field>]',
  },
  'azure-kv': {
    pattern: /^[A-Za-z0-9-]{3,24}\/[A-Za-z0-9-]{1,127}$/,
    form: 'azure-kv.<vault-name>/<secret-name>[#<json-field>]',
  },
};

/** Whether a config value is written as a secret-manager reference at all (well formed or not). */
export function looksLikeSecretReference(value: string): boolean {
  return PREFIX.test(value);
}

/**
 * The reference a config value stands for: undefined for a plain value, an Error naming the expected form for
 * a malformed one (a typo must fail start-up, not be sent upstream as a key).
 */
export function parseSecretReference(value: string): SecretReference | Error | undefined {
  const match = PREFIX.exec(value);
  if (!match) return undefined;
  const backend = match[1] as SecretBackendName;
  const rest = match[2] ?? '';
  const hash = rest.indexOf('#');
  const secret = hash === -1 ? rest : rest.slice(0, hash);
  const field = hash === -1 ? undefined : rest.slice(hash + 1);
  const shape = SECRET_SHAPES[backend];
  if (!shape.pattern.test(secret) || (field !== undefined && !FIELD.test(field))) {
    return new Error(`'${value.slice(0, 200)}' is not a valid secret reference (${shape.form})`);
  }
  if (backend === 'vault' && field === undefined) {
    return new Error(`'${value.slice(0, 200)}' names no field (${shape.form})`);
  }
  return { text: value, backend, secret, field };
}

/** A synchronous read of a resolved reference from memory (the resolver of @gw/vault implements it). */
export interface SecretLookup {
  /** The current value of a reference; undefined when it was never read successfully. */
  lookup(reference: string): string | undefined;
}
