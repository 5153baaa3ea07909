import type { SecretReferencesConfig } from './admin-config.ts';
import { envReferenceName } from './env-reference.ts';
import { GATEWAY_VARIABLES } from './environment.ts';

/**
 * Which references a caller with `secrets:reference` (Admin) may name in a resource written through the API
 * (docs/admin-access.md "Secret references"). A reference makes gw read a secret with its own identity and send
 * it where the resource says, so an Admin token, once leaked, would otherwise read every variable of gw's
 * environment (issue 42, defect 4). References of the config file are the operator's and are not checked.
 */
export interface SecretReferenceRule {
  /** Why `reference` may not be named through the API (a sentence to follow the field); undefined: it may. */
  refusal(reference: string): string | undefined;
}

/**
 * What an unset `allow` refuses besides the variables gw reads: names of gw's own namespace (a later version's
 * variables, a deployment's own), and the variables through which the platform's SDKs give gw its identity (its
 * secret managers' credentials, the log database's PostgreSQL defaults). An `allow` list may name them.
 */
const OWN_BY_DEFAULT = [
  'env.GW_*',
  'env.GATEWAY_*',
  'env.VAULT_*',
  'env.AWS_*',
  'env.AZURE_CLIENT_*',
  'env.AZURE_FEDERATED_TOKEN_FILE',
  'env.AZURE_PASSWORD',
  'env.GOOGLE_APPLICATION_CREDENTIALS',
  'env.PG*',
] as const;

/** A pattern as a whole-string expression: `*` matches any run of characters, everything else itself. */
function patternOf(pattern: string): RegExp {
  const parts = pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${parts.join('.*')}$`, 's');
}

/** The rule of the config file's `admin.secret_references` (read at start, like the rest of `admin`). */
export function secretReferenceRule(config: SecretReferencesConfig): SecretReferenceRule {
  const allowed = config.allow?.map(patternOf);
  const ownByDefault = OWN_BY_DEFAULT.map(patternOf);
  return {
    refusal(reference) {
      const name = envReferenceName(reference);
      if (name !== undefined && GATEWAY_VARIABLES.has(name))
        return `${name} is a variable gw itself reads (its own credentials and settings), which no reference written through the API may name (the config file, GATEWAY_CONFIG, may)`;
      if (allowed) {
        if (allowed.some((pattern) => pattern.test(reference))) return undefined;
        return 'admin.secret_references.allow of the config file does not list it, so it cannot be named through the API (the config file may name it)';
      }
      if (ownByDefault.some((pattern) => pattern.test(reference)))
        return `it names gw's own namespace or its platform identity (${OWN_BY_DEFAULT.join(', ')}), which the API may name only where the config file's admin.secret_references.allow lists it`;
      return undefined;
    },
  };
}
