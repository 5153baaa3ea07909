import type { z } from 'zod';
import { invalidRequest } from '../errors/gateway-error.ts';
import { checkOutboundUrl, type OutboundPolicy } from '../http/outbound-address.ts';
import { maskSecret, redactUrl, standsForSecret, unmaskUrl, urlSecrets } from '../redaction.ts';
import { type FieldTree, fieldTree, joinPath, type VisitedField, walkFields } from './declared-fields.ts';

/**
 * What the marks of a schema (declared-fields.ts) do to values of it: the credentials a value holds, where it
 * sends them, the value as answers show it, and a written value with the stored credentials its masks stand for.
 */

/** The credential strings of a value (to take out of texts an upstream may echo). */
export function secretValues(tree: FieldTree, value: unknown): string[] {
  const found: string[] = [];
  walkFields(tree, value, (field) => {
    if (field.secret && typeof field.value === 'string' && field.value !== '') found.push(field.value);
  });
  return found;
}

/** The credentials of a value by path. */
export function credentialsOf(tree: FieldTree, value: unknown): Map<string, string> {
  const found = new Map<string, string>();
  walkFields(tree, value, (field) => {
    if (field.secret && typeof field.value === 'string') found.set(field.path, field.value);
  });
  return found;
}

/** A URL as it is dialed (`https://a.example` and `https://a.example/` are one place); other values as they are. */
function normalized(value: string): string {
  try {
    return new URL(value).href;
  } catch {
    return value;
  }
}

/** Where a value sends its credentials, by path (`network_config.base_url`, `keys[0].config.endpoint`). */
export function destinationsOf(tree: FieldTree, value: unknown): Map<string, string> {
  const found = new Map<string, string>();
  walkFields(tree, value, (field) => {
    if (field.destination) found.set(field.path, normalized(String(field.value)));
  });
  return found;
}

/** Every field of a value the callback may replace, with the stored value at the same place. */
export interface MappedField extends VisitedField {
  stored: unknown;
}

/**
 * A copy of `value` with each string and number replaced by what `map` returns. `stored` is walked alongside:
 * array items are paired by their `id` when the stored ones have ids (a list reordered keeps each item's own
 * secrets), by position otherwise; map members by name.
 */
export function mapFields(
  tree: FieldTree,
  value: unknown,
  map: (field: MappedField) => unknown,
  stored?: unknown,
): unknown {
  // The walk sees values depth-first in the same order this copy is built; each leaf is looked up by its path.
  const leaves = new Map<string, VisitedField>();
  walkFields(tree, value, (field) => leaves.set(field.path, field));
  const copy = (item: unknown, path: string, previous: unknown): unknown => {
    if (typeof item === 'string' || typeof item === 'number') {
      const field = leaves.get(path);
      return field ? map({ ...field, stored: previous }) : item;
    }
    if (Array.isArray(item)) {
      const before = Array.isArray(previous) ? previous : [];
      const byId = new Map(before.filter(hasId).map((entry) => [entry.id, entry]));
      return item.map((entry, index) =>
        copy(
          entry,
          joinPath(path, index),
          byId.size > 0 ? hasId(entry) && byId.get(entry.id) : before[index],
        ),
      );
    }
    if (item === null || typeof item !== 'object') return item;
    const before =
      previous !== null && typeof previous === 'object' ? (previous as Record<string, unknown>) : {};
    return Object.fromEntries(
      Object.entries(item).map(([name, entry]) => [name, copy(entry, joinPath(path, name), before[name])]),
    );
  };
  return copy(value, '', stored);
}

function hasId(value: unknown): value is { id: string } {
  return value !== null && typeof value === 'object' && typeof (value as { id?: unknown }).id === 'string';
}

/** Whether a destination's value is a URL that carries credentials (`user:pass@`, `?api_key=`). */
const urlWithSecrets = (field: VisitedField): field is VisitedField & { value: string } =>
  field.destination && typeof field.value === 'string' && urlSecrets(field.value).length > 0;

/**
 * A value as answers show it: every credential masked (references shown as written: they name, not hold), and
 * every destination URL without the credentials it carries.
 */
export function maskSecrets<T>(tree: FieldTree, value: T): T {
  return mapFields(tree, value, (field) => {
    if (field.secret && typeof field.value === 'string') return maskSecret(field.value);
    if (urlWithSecrets(field)) return redactUrl(field.value);
    return field.value;
  }) as T;
}

/**
 * A destination URL written back: as answers show the stored one, it is the stored one; with the stored
 * password or credential parameters masked (`user:****@`, `?token=****`, a reader's `[redacted]`) while other
 * parts changed (a path, a parameter), those credentials are the stored ones, as masked credential fields are
 * (issue 42, defect 3); a new password is taken as written. A mask cannot take the stored credentials to another
 * origin: 400 naming the field (send them again with the new address).
 */
function keptUrl(field: MappedField, stored: string): unknown {
  if (typeof field.value !== 'string') return field.value;
  if (field.value === redactUrl(stored)) return stored;
  const unmasked = unmaskUrl(field.value, stored);
  if (!unmasked) return field.value;
  const origin = new URL(stored).origin;
  if (unmasked.origin !== origin)
    throw invalidRequest(
      `${field.path}: sends back masked credentials of the stored URL (of ${origin}) to ${unmasked.origin}: write the password and credential parameters themselves with a new address`,
      field.path,
    );
  return unmasked.href;
}

/**
 * A written value with each credential that stands for the stored one (its mask, or a viewer's `[redacted]`:
 * a read sent back) replaced by the stored credential, so a read-edit-write never stores a mask.
 */
export function keepStoredSecrets<T>(tree: FieldTree, value: T, stored: unknown): T {
  if (stored === undefined) return value;
  return mapFields(
    tree,
    value,
    (field) => {
      if (typeof field.stored !== 'string') return field.value;
      if (field.secret && standsForSecret(field.value, field.stored)) return field.stored;
      if (urlWithSecrets({ ...field, value: field.stored })) return keptUrl(field, field.stored);
      return field.value;
    },
    stored,
  ) as T;
}

/**
 * Checks every destination of a value that is a URL against the outbound address policy (a resource written
 * through the API: providers, guardrail profiles, alert channels, MCP clients), naming the field of the first
 * it refuses (400). Hosts, ports and regions are checked where they are dialed. `protocols` as checkOutboundUrl.
 */
export async function checkDestinations(
  schema: z.ZodType,
  value: unknown,
  policy: OutboundPolicy,
  options: { prefix?: string; protocols?: readonly string[] } = {},
): Promise<void> {
  const urls: Array<[string, string]> = [];
  walkFields(fieldTree(schema), value, (field) => {
    if (field.destination && typeof field.value === 'string' && /^[a-z][a-z0-9+.-]*:\/\//i.test(field.value))
      urls.push([field.path, field.value]);
  });
  for (const [path, url] of urls) {
    await checkOutboundUrl(url, policy, {
      field: `${options.prefix ?? ''}${path}`,
      ...(options.protocols && { protocols: options.protocols }),
    });
  }
}
