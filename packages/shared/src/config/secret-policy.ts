import { GatewayError } from '../errors/gateway-error.ts';
import { SECRET_FIELD } from '../redaction.ts';
import { envReferenceName } from './env-reference.ts';
import { looksLikeSecretReference } from './secret-reference.ts';

/**
 * The one secret policy (docs/admin-access.md "Secret references"): `env.NAME` and secret-manager references (`vault.…`, `aws-sm.…`,
 * `gcp-sm.…`, `azure-kv.…`) make gw read a secret with its own identity and send it where the resource says.
 * The config file may name them; a resource written through an API (providers, guardrail profiles, alert
 * channels, MCP clients) may only when its caller holds this permission, which only Admin has
 * (docs/admin-access.md "Secret references").
 */
const SECRET_REFERENCE_PERMISSION = 'secrets:reference';

/** Fields that say where a resource sends its credentials: changing one moves every secret it holds. */
const DESTINATION_FIELD = /^(?:url|base_url|endpoint|connection_string|host|port|region)$/;

export interface SecretPolicyOptions {
  /** The caller holds `secrets:reference`: references are accepted as written. */
  mayReference: boolean;
  /**
   * The stored resource the write replaces: its references may be written back as they are (a read sent back
   * shows them as written), as long as no destination field (`url`, `endpoint`, `base_url`…) changes.
   */
  stored?: unknown;
  /** Prefix of the field names in messages (`config.` of a form that nests the resource). */
  prefix?: string;
}

/** Whether a string is an environment or secret-manager reference. */
function isSecretReference(value: string): boolean {
  return envReferenceName(value) !== undefined || looksLikeSecretReference(value);
}

function walk(value: unknown, path: string, visit: (path: string, value: string) => void): void {
  if (typeof value === 'string') visit(path, value);
  else if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) walk(item, `${path}[${index}]`, visit);
  } else if (value && typeof value === 'object') {
    for (const [field, item] of Object.entries(value)) walk(item, path ? `${path}.${field}` : field, visit);
  }
}

/** A URL as it is dialed (`https://a.example` and `https://a.example/` are one place); other values as they are. */
function normalized(value: string): string {
  try {
    return new URL(value).href;
  } catch {
    return value;
  }
}

/** The destination fields of a resource by path (`network_config.base_url`, `keys[0].config.endpoint`). */
function destinations(value: unknown): Map<string, string> {
  const found = new Map<string, string>();
  const visit = (item: unknown, path: string, field: string) => {
    if (DESTINATION_FIELD.test(field) && (typeof item === 'string' || typeof item === 'number')) {
      found.set(path, normalized(String(item)));
    } else if (Array.isArray(item)) {
      for (const [index, element] of item.entries()) visit(element, `${path}[${index}]`, field);
    } else if (item && typeof item === 'object') {
      for (const [name, element] of Object.entries(item))
        visit(element, path ? `${path}.${name}` : name, name);
    }
  };
  visit(value, '', '');
  return found;
}

function refusal(field: string, message: string): GatewayError {
  return new GatewayError({ type: 'invalid_request', code: 'secret_reference', param: field, message });
}

const RULE = `naming one through the API needs the permission ${SECRET_REFERENCE_PERMISSION} (Admin's alone; the config file, GATEWAY_CONFIG, may always): send the secret's value itself`;

/**
 * Throws 400 (`code: secret_reference`) naming the first field of `input` that holds an environment or
 * secret-manager reference the caller may not write: a new one, or a stored one whose destination the write
 * changes. Every API write path of a resource that can hold a credential calls it before storing.
 */
export function refuseSecretReferences(input: unknown, options: SecretPolicyOptions): void {
  if (options.mayReference) return;
  const prefix = options.prefix ?? '';
  const known = new Set<string>();
  walk(options.stored, '', (_path, value) => {
    if (isSecretReference(value)) known.add(value);
  });
  let kept: string | undefined;
  walk(input, '', (path, value) => {
    if (!isSecretReference(value)) return;
    if (known.has(value)) {
      kept ??= path;
      return;
    }
    throw refusal(
      `${prefix}${path}`,
      `${prefix}${path}: '${value.slice(0, 200)}' is an environment or secret-manager reference; ${RULE}`,
    );
  });
  if (kept === undefined) return;
  const before = destinations(options.stored);
  const after = destinations(input);
  for (const path of new Set([...before.keys(), ...after.keys()])) {
    if (before.get(path) === after.get(path)) continue;
    throw refusal(
      `${prefix}${path}`,
      `${prefix}${path}: changes where the stored reference of ${prefix}${kept} is sent; only a caller with the permission ${SECRET_REFERENCE_PERMISSION} (Admin) may, or send the secret's value itself`,
    );
  }
}

/** Fields whose strings are credentials without saying so in their names (key values, header maps, env). */
const VALUE_FIELD = /^(?:value|key|headers|extra_headers|envs?)$/;

/** The credentials of a resource by path: strings under a credential field, and references anywhere. */
function credentials(value: unknown): Map<string, string> {
  const found = new Map<string, string>();
  const visit = (item: unknown, path: string, secret: boolean) => {
    if (typeof item === 'string') {
      if (secret || isSecretReference(item)) found.set(path, item);
    } else if (Array.isArray(item)) {
      for (const [index, element] of item.entries()) visit(element, `${path}[${index}]`, secret);
    } else if (item && typeof item === 'object') {
      for (const [name, element] of Object.entries(item)) {
        const field = secret || SECRET_FIELD.test(name) || VALUE_FIELD.test(name);
        visit(element, path ? `${path}.${name}` : name, field);
      }
    }
  };
  visit(value, '', false);
  return found;
}

/**
 * Throws 400 (`code: secret_reference`) when a write keeps a stored credential (sent back masked, or left out
 * of a patch) while it changes where the resource sends it (`url`, `endpoint`, `base_url`, `host`, `port`,
 * `region`): a role that may edit a guardrail profile, an alert channel or a provider would otherwise move
 * Admin's key to an address of its choosing. Only a caller with `secrets:reference` (Admin) may; anyone else
 * sends the credentials again with the new destination. `resource` is the whole resource about to be stored.
 */
export function refuseMovedSecrets(resource: unknown, options: SecretPolicyOptions): void {
  if (options.mayReference || options.stored === undefined) return;
  const before = destinations(options.stored);
  const after = destinations(resource);
  const moved = [...new Set([...before.keys(), ...after.keys()])].find(
    (path) => before.get(path) !== after.get(path),
  );
  if (moved === undefined) return;
  const stored = new Set(credentials(options.stored).values());
  const kept = [...credentials(resource)].find(([, value]) => value !== '' && stored.has(value));
  if (!kept) return;
  const prefix = options.prefix ?? '';
  throw refusal(
    `${prefix}${moved}`,
    `${prefix}${moved}: changes where the stored credential ${prefix}${kept[0]} is sent; send the credential again with the new destination (only a caller with the permission ${SECRET_REFERENCE_PERMISSION}, Admin, may move a stored one)`,
  );
}
