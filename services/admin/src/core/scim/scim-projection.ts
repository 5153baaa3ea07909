import { parseAttributeName, type ScimPath } from './scim-filter.ts';
import { isObject, type ScimResource } from './scim-resource.ts';
import type { ResourceType } from './scim-schema.ts';

/**
 * `attributes` and `excludedAttributes` (RFC 7644 §3.4.2.5): which attributes an answer carries. `id` and
 * `schemas` are always returned; names the schema does not have are ignored.
 */
export interface Projection {
  attributes?: string[] | undefined;
  excludedAttributes?: string[] | undefined;
}

function paths(names: string[] | undefined, type: ResourceType, parameter: string): ScimPath[] {
  return (names ?? [])
    .map((name) => name.trim())
    .filter(Boolean)
    .flatMap((name) => parseAttributeName(name, type, parameter) ?? []);
}

/** Keeps only `sub` of a complex value (or of each of a multi-valued attribute's values). */
function pick(value: unknown, sub: string): unknown {
  if (Array.isArray(value)) return value.map((item) => pick(item, sub));
  return isObject(value) && value[sub] !== undefined ? { [sub]: value[sub] } : undefined;
}

function merge(a: unknown, b: unknown): unknown {
  if (Array.isArray(a) && Array.isArray(b)) return a.map((item, index) => merge(item, b[index]));
  if (isObject(a) && isObject(b)) return { ...a, ...b };
  return b ?? a;
}

function holder(
  resource: ScimResource,
  path: ScimPath,
  create: boolean,
): Record<string, unknown> | undefined {
  if (path.extension === undefined) return resource;
  const existing = resource[path.extension];
  if (isObject(existing)) return existing;
  if (!create) return undefined;
  const made: Record<string, unknown> = {};
  resource[path.extension] = made;
  return made;
}

export function project(resource: ScimResource, projection: Projection, type: ResourceType): ScimResource {
  const kept = paths(projection.attributes, type, 'attributes');
  const dropped = paths(projection.excludedAttributes, type, 'excludedAttributes');
  let result: ScimResource = resource;
  if (kept.length > 0) {
    result = { schemas: resource['schemas'], id: resource['id'] };
    for (const path of kept) {
      const source = holder(resource, path, false)?.[path.attribute];
      if (source === undefined) continue;
      const target = holder(result, path, true)!;
      const value = path.subAttribute === undefined ? source : pick(source, path.subAttribute);
      if (value !== undefined) target[path.attribute] = merge(target[path.attribute], value);
    }
  }
  if (dropped.length > 0) {
    result = structuredClone(result);
    for (const path of dropped) {
      if (path.extension === undefined && (path.attribute === 'id' || path.attribute === 'schemas')) continue;
      const target = holder(result, path, false);
      if (!target) continue;
      const sub = path.subAttribute;
      if (sub === undefined) delete target[path.attribute];
      else {
        const value = target[path.attribute];
        for (const item of Array.isArray(value) ? value : [value]) if (isObject(item)) delete item[sub];
      }
    }
  }
  return result;
}
