import { createHash } from 'node:crypto';
import { invalidSyntax, invalidValue } from './scim-errors.ts';
import {
  type AttributeDefinition,
  findAttribute,
  findExtension,
  locateAttribute,
  type ResourceType,
} from './scim-schema.ts';

/**
 * A SCIM resource as gw holds it while working on it: attribute names in their canonical spelling, booleans as
 * booleans, extension attributes under their schema URN, attributes the schema does not have left out.
 */
export type ScimResource = Record<string, unknown>;

/** Longest text one attribute may hold, and most values of one multi-valued attribute (members aside). */
const MAX_TEXT = 1024;
const MAX_VALUES = 100;

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const shown = (value: unknown) => JSON.stringify(value)?.slice(0, 60) ?? String(value);

function singleValue(value: unknown, definition: AttributeDefinition, label: string): unknown {
  switch (definition.type) {
    case 'complex': {
      if (!isObject(value)) throw invalidValue(`${label}: must be an object, not ${shown(value)}`);
      const canonical: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        const sub = findAttribute(definition.subAttributes, key);
        if (!sub || item === null || item === undefined) continue;
        canonical[sub.name] = singleValue(item, sub, `${label}.${sub.name}`);
      }
      return canonical;
    }
    case 'boolean':
      // Microsoft Entra ID sends booleans as the strings "True" and "False".
      if (typeof value === 'boolean') return value;
      if (typeof value === 'string' && /^(true|false)$/i.test(value)) return value.toLowerCase() === 'true';
      throw invalidValue(`${label}: must be true or false, not ${shown(value)}`);
    default: {
      const text = typeof value === 'number' && Number.isFinite(value) ? String(value) : value;
      if (typeof text !== 'string') throw invalidValue(`${label}: must be a string, not ${shown(value)}`);
      if (text.length > MAX_TEXT) throw invalidValue(`${label}: is longer than ${MAX_TEXT} characters`);
      if (definition.type === 'dateTime' && Number.isNaN(Date.parse(text)))
        throw invalidValue(`${label}: '${text.slice(0, 40)}' is not a date and time`);
      return text;
    }
  }
}

/**
 * A value of an attribute in canonical form (400 invalidValue naming the attribute when it has the wrong
 * type); a multi-valued attribute takes an array, or one value for an array of one. Undefined for null.
 */
export function canonicalValue(value: unknown, definition: AttributeDefinition, label: string): unknown {
  if (value === null || value === undefined) return undefined;
  if (!definition.multiValued) return singleValue(value, definition, label);
  const values = Array.isArray(value) ? value : [value];
  if (definition.name !== 'members' && values.length > MAX_VALUES)
    throw invalidValue(`${label}: holds more than ${MAX_VALUES} values`);
  return values
    .filter((item) => item !== null && item !== undefined)
    .map((item, index) => singleValue(item, definition, `${label}[${index}]`));
}

/** Whether an attribute is the client's to write (id, meta, a user's groups are not; a password is never kept). */
const writable = (definition: AttributeDefinition) =>
  definition.mutability !== 'readOnly' && definition.mutability !== 'writeOnly';

/**
 * A POST or PUT body as a resource: known attributes in canonical form, read-only ones (id, meta, groups) and
 * passwords dropped, attributes of unknown schemas ignored (RFC 7644 §3.3 lets a service provider ignore what
 * it does not support; an identity provider's default attribute mappings must not fail provisioning).
 */
export function canonicalResource(body: Record<string, unknown>, type: ResourceType): ScimResource {
  const schemas = body['schemas'];
  if (
    schemas !== undefined &&
    (!Array.isArray(schemas) || !schemas.every((item) => typeof item === 'string'))
  )
    throw invalidSyntax('schemas: must be an array of schema URNs');
  const resource: ScimResource = {};
  for (const [key, value] of Object.entries(body)) {
    if (key.toLowerCase() === 'schemas') continue;
    const extension = findExtension(type, key);
    if (extension) {
      if (value === null || value === undefined) continue;
      if (!isObject(value)) throw invalidValue(`${extension.id}: must be an object of its attributes`);
      const attributes: Record<string, unknown> = {};
      for (const [name, item] of Object.entries(value)) {
        const definition = findAttribute(extension.attributes, name);
        if (!definition || !writable(definition)) continue;
        const canonical = canonicalValue(item, definition, definition.name);
        if (canonical !== undefined) attributes[definition.name] = canonical;
      }
      if (Object.keys(attributes).length > 0) resource[extension.id] = attributes;
      continue;
    }
    const located = locateAttribute(type, key);
    if (!located || !writable(located.definition)) continue;
    const canonical = canonicalValue(value, located.definition, located.definition.name);
    if (canonical !== undefined) resource[located.definition.name] = canonical;
  }
  return resource;
}

/** Structural equality of JSON values (key order aside). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, index) => sameJson(item, b[index]));
  }
  if (!isObject(a) || !isObject(b)) return false;
  const keys = Object.keys(a).filter((key) => a[key] !== undefined);
  if (keys.length !== Object.keys(b).filter((key) => b[key] !== undefined).length) return false;
  return keys.every((key) => sameJson(a[key], b[key]));
}

/** The version of a resource: a hash of what the client reads, so any change (a group's too) changes it. */
function versionOf(resource: ScimResource): string {
  return `W/"${createHash('sha256').update(JSON.stringify(resource)).digest('hex').slice(0, 20)}"`;
}

/** `meta` (RFC 7643 §3.1) added to a resource. */
export function withMeta(
  resource: ScimResource,
  meta: { resourceType: 'User' | 'Group'; created: string; lastModified: string; location: string },
): ScimResource {
  return { ...resource, meta: { ...meta, version: versionOf(resource) } };
}
