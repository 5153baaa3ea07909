import type { z } from 'zod';
import { GatewayError } from '../errors/gateway-error.ts';
import { fieldTree, walkFields } from './declared-fields.ts';
import { credentialsOf, destinationsOf } from './declared-values.ts';
import { envReferenceName } from './env-reference.ts';
import { looksLikeSecretReference } from './secret-reference.ts';
import type { SecretReferenceRule } from './secret-reference-rule.ts';

/**
 * The one secret policy (docs/admin-access.md "Secret references"): `env.NAME` and secret-manager references (`vault.…`, `aws-sm.…`,
 * `gcp-sm.…`, `azure-kv.…`) make gw read a secret with its own identity and send it where the resource says.
 * The config file may name them; a resource written through an API (providers, guardrail profiles, alert
 * channels, MCP clients) may only when its caller holds this permission, which only Admin has, only in the
 * fields its schema declares credentials (`secret`: declared-fields.ts), the only ones read at use, and only
 * the references the config file's `admin.secret_references` allows (never a variable gw itself reads).
 */
const SECRET_REFERENCE_PERMISSION = 'secrets:reference';

export interface SecretPolicyOptions {
  /**
   * The caller holds `secrets:reference`: references in credential fields that `references` allows are accepted
   * as written.
   */
  mayReference: boolean;
  /** Which references a caller with `secrets:reference` may name (`admin.secret_references`). */
  references: SecretReferenceRule;
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

function refusal(field: string, message: string): GatewayError {
  return new GatewayError({ type: 'invalid_request', code: 'secret_reference', param: field, message });
}

const RULE = `naming one through the API needs the permission ${SECRET_REFERENCE_PERMISSION} (Admin's alone; the config file, GATEWAY_CONFIG, may always): send the secret's value itself`;

/** The first destination whose value differs between two versions of a resource. */
function movedDestination(schema: z.ZodType, before: unknown, after: unknown): string | undefined {
  const tree = fieldTree(schema);
  const was = destinationsOf(tree, before);
  const is = destinationsOf(tree, after);
  return [...new Set([...was.keys(), ...is.keys()])].find((path) => was.get(path) !== is.get(path));
}

/**
 * Throws 400 (`code: secret_reference`) naming the first field of `input` (a value of `schema`) that holds an
 * environment or secret-manager reference the caller may not write: one in a field that is not a credential
 * (it would be sent as written, never read), a new one, or a stored one whose destination the write changes.
 * Every API write path of a resource that can hold a credential calls it before storing.
 */
export function refuseSecretReferences(
  schema: z.ZodType,
  input: unknown,
  options: SecretPolicyOptions,
): void {
  const prefix = options.prefix ?? '';
  const tree = fieldTree(schema);
  const known = new Set([...credentialsOf(tree, options.stored).values()].filter(isSecretReference));
  /** The first reference the caller may not name that the write keeps where the stored resource has it. */
  let kept: { path: string; reference: string; why: string | undefined } | undefined;
  walkFields(tree, input, ({ path, value, secret }) => {
    if (typeof value !== 'string' || !isSecretReference(value)) return;
    const field = `${prefix}${path}`;
    const shown = value.slice(0, 200);
    if (!secret) {
      throw refusal(
        field,
        `${field}: '${shown}' is an environment or secret-manager reference, and ${field} is not a credential field: only credential fields are read at use`,
      );
    }
    // Why this caller may not name it: without the permission, none; with it, what the config file refuses.
    const why = options.mayReference ? options.references.refusal(value) : undefined;
    if (options.mayReference && why === undefined) return;
    if (known.has(value)) {
      kept ??= { path, reference: shown, why };
      return;
    }
    throw refusal(
      field,
      `${field}: '${shown}' is an environment or secret-manager reference; ${why ?? RULE}`,
    );
  });
  if (kept === undefined) return;
  const moved = movedDestination(schema, options.stored, input);
  if (moved === undefined) return;
  const { path, reference, why } = kept;
  throw refusal(
    `${prefix}${moved}`,
    why === undefined
      ? `${prefix}${moved}: changes where the stored reference of ${prefix}${path} is sent; only a caller with the permission ${SECRET_REFERENCE_PERMISSION} (Admin) may, or send the secret's value itself`
      : `${prefix}${moved}: changes where the stored reference '${reference}' of ${prefix}${path} is sent, and ${why}: send the secret's value itself`,
  );
}

/**
 * Throws 400 (`code: secret_reference`) when a write keeps a stored credential (sent back masked, or left out
 * of a patch) while it changes where the resource sends it (its `destination` fields): a role that may edit a
 * guardrail profile, an alert channel or a provider would otherwise move Admin's key to an address of its
 * choosing. Only a caller with `secrets:reference` (Admin) may; anyone else sends the credentials again with the
 * new destination. `resource` is the whole resource about to be stored, a value of `schema`.
 */
export function refuseMovedSecrets(
  schema: z.ZodType,
  resource: unknown,
  options: Omit<SecretPolicyOptions, 'references'>,
): void {
  if (options.mayReference || options.stored === undefined) return;
  const moved = movedDestination(schema, options.stored, resource);
  if (moved === undefined) return;
  const tree = fieldTree(schema);
  const stored = new Set(credentialsOf(tree, options.stored).values());
  const kept = [...credentialsOf(tree, resource)].find(([, value]) => value !== '' && stored.has(value));
  if (!kept) return;
  const prefix = options.prefix ?? '';
  throw refusal(
    `${prefix}${moved}`,
    `${prefix}${moved}: changes where the stored credential ${prefix}${kept[0]} is sent; send the credential again with the new destination (only a caller with the permission ${SECRET_REFERENCE_PERMISSION}, Admin, may move a stored one)`,
  );
}
