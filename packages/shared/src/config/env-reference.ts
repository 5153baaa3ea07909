import { looksLikeSecretReference, type SecretLookup } from './secret-reference.ts';

/** `env.NAME` in a config value reads the environment variable NAME (README.md "Configuration"). */
const ENV_REFERENCE = /^env\.([A-Za-z_][A-Za-z0-9_]*)$/;

export function envReferenceName(value: string): string | undefined {
  return ENV_REFERENCE.exec(value)?.[1];
}

/**
 * The secret a config value stands for; undefined when it names an unset variable, or a secret-manager
 * reference (`vault.…`, `aws-sm.…`: docs/vault.md) that `secrets` has no value for. `env` is the environment
 * the process's main handed over: nothing below main reads process.env. Synchronous: a secret-manager value is
 * read from the resolver's memory, so a rotated secret is used from the next call on.
 */
export function resolveSecret(
  value: string,
  env: NodeJS.ProcessEnv,
  secrets?: SecretLookup | undefined,
): string | undefined {
  const name = envReferenceName(value);
  if (name !== undefined) return env[name];
  if (looksLikeSecretReference(value)) return secrets?.lookup(value);
  return value;
}
