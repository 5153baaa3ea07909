import { invalidPath, invalidSyntax, invalidValue, mutability, noTarget, ScimError } from './scim-errors.ts';
import { matches, parsePath, type ScimFilter, type ScimPath, valuesAt } from './scim-filter.ts';
import { canonicalValue, isObject, type ScimResource, sameJson } from './scim-resource.ts';
import {
  type AttributeDefinition,
  findAttribute,
  findExtension,
  type ResourceType,
  SCHEMA,
} from './scim-schema.ts';

/**
 * PATCH (RFC 7644 §3.5.2) on a resource as the client sees it: `add`, `replace` and `remove`, with a path or
 * without (then `value` holds attributes, or paths, to set), op names in any case (Entra sends `Replace`),
 * value filters (`members[value eq "…"]`, `emails[type eq "work"].value`). What Okta and Microsoft Entra ID
 * send and the RFC does not say outright is decided for them, and written in docs/scim.md:
 * - `remove` of `members` with a `value` list removes those members (Entra), not all of them;
 * - `add` or `replace` of `emails[type eq "work"].value` when no work email exists adds one (Entra);
 * - `remove` of a value no filter matches changes nothing (a member already gone stays gone);
 * - attributes the schema does not have are ignored, read-only ones may be "set" to the value they have
 *   (Okta's group rename sends the group's `id`).
 */

export interface PatchOperation {
  op: 'add' | 'replace' | 'remove';
  path?: ScimPath | undefined;
  value?: unknown;
  /** Its place in `Operations`, for error messages. */
  index: number;
}

/** Most operations one PATCH request may carry. */
const MAX_OPERATIONS = 1000;

function prefixed(error: unknown, prefix: string): unknown {
  return error instanceof ScimError
    ? new ScimError(error.status, `${prefix}${error.message}`, error.scimType)
    : error;
}

/** A PatchOp request body, checked: 400 invalidSyntax, invalidPath, invalidValue or noTarget naming the operation. */
export function parsePatch(body: Record<string, unknown>, type: ResourceType): PatchOperation[] {
  const schemas = body['schemas'];
  if (
    !Array.isArray(schemas) ||
    !schemas.some((schema) => String(schema).toLowerCase() === SCHEMA.patchOp.toLowerCase())
  )
    throw invalidSyntax(`schemas: a PATCH body names ["${SCHEMA.patchOp}"]`);
  const key = Object.keys(body).find((name) => name.toLowerCase() === 'operations');
  const operations = key === undefined ? undefined : body[key];
  if (!Array.isArray(operations) || operations.length === 0)
    throw invalidSyntax('Operations: must be a non-empty array of operations');
  if (operations.length > MAX_OPERATIONS)
    throw invalidSyntax(`Operations: holds more than ${MAX_OPERATIONS} operations`);
  return operations.map((operation: unknown, index) => {
    const label = `Operations[${index}]`;
    if (!isObject(operation)) throw invalidSyntax(`${label}: must be an object with op, path and value`);
    const field = (name: string) => {
      const found = Object.keys(operation).find((candidate) => candidate.toLowerCase() === name);
      return found === undefined ? undefined : operation[found];
    };
    const op = String(field('op') ?? '').toLowerCase();
    if (op !== 'add' && op !== 'replace' && op !== 'remove')
      throw invalidSyntax(`${label}.op: '${String(field('op')).slice(0, 40)}' is not add, replace or remove`);
    const rawPath = field('path');
    if (rawPath !== undefined && typeof rawPath !== 'string')
      throw invalidPath(`${label}.path: must be a string`);
    let path: ScimPath | undefined;
    try {
      path = rawPath === undefined || rawPath === '' ? undefined : parsePath(rawPath, type);
    } catch (error) {
      throw prefixed(error, `${label}.`);
    }
    const value = field('value');
    if (op === 'remove' && !path) throw noTarget(`${label}: remove needs a path`);
    if (op !== 'remove') {
      if (value === undefined) throw invalidValue(`${label}.value: is required for ${op}`);
      if (!path && !isObject(value))
        throw invalidValue(`${label}.value: without a path, value must be an object of attributes`);
    }
    return { op, path, value, index };
  });
}

/** The equalities of a filter made only of `sub eq value` and `and` (what a new value must carry), if it is one. */
function equalities(filter: ScimFilter): Record<string, unknown> | undefined {
  if (filter.op === 'and') {
    const left = equalities(filter.left);
    const right = equalities(filter.right);
    return left && right ? { ...left, ...right } : undefined;
  }
  if (
    filter.op === 'eq' &&
    filter.value !== null &&
    !filter.path.where &&
    filter.path.subAttribute === undefined
  )
    return { [filter.path.attribute]: filter.value };
  return undefined;
}

/** The key two values of a multi-valued attribute are the same by: their `value`, else the whole value. */
function identity(item: unknown, definition: AttributeDefinition): string {
  const value = isObject(item) ? item['value'] : undefined;
  if (typeof value !== 'string') return JSON.stringify(item);
  const caseExact = findAttribute(definition.subAttributes, 'value')?.caseExact ?? false;
  return `value:${caseExact ? value : value.toLowerCase()}`;
}

/** At most one value is primary: the ones this operation set win. */
function onePrimary(items: unknown[], chosen: Set<unknown>) {
  const winner = items.find((item) => chosen.has(item) && isObject(item) && item['primary'] === true);
  if (!winner) return;
  for (const item of items)
    if (item !== winner && isObject(item) && item['primary'] === true) item['primary'] = false;
}

class Patcher {
  private readonly resource: ScimResource;
  private readonly type: ResourceType;

  constructor(resource: ScimResource, type: ResourceType) {
    this.resource = structuredClone(resource);
    this.type = type;
  }

  result(): ScimResource {
    return this.resource;
  }

  apply(operation: PatchOperation) {
    try {
      if (operation.path) this.applyAt(operation.op, operation.path, operation.value);
      else this.applyAttributes(operation.op, operation.value as Record<string, unknown>);
    } catch (error) {
      throw prefixed(error, `Operations[${operation.index}]: `);
    }
  }

  /** add or replace without a path: each member of `value` is an attribute, a path, or an extension's attributes. */
  private applyAttributes(op: 'add' | 'replace' | 'remove', value: Record<string, unknown>) {
    for (const [key, item] of Object.entries(value)) {
      if (key.toLowerCase() === 'schemas') continue;
      const extension = findExtension(this.type, key);
      if (extension && isObject(item)) {
        for (const [name, sub] of Object.entries(item))
          this.applyAt(op, parsePath(`${extension.id}:${name}`, this.type), sub);
        continue;
      }
      this.applyAt(op, parsePath(key, this.type), item);
    }
  }

  private container(path: ScimPath, create: boolean): Record<string, unknown> | undefined {
    if (path.extension === undefined) return this.resource;
    const existing = this.resource[path.extension];
    if (isObject(existing)) return existing;
    if (!create) return undefined;
    const made: Record<string, unknown> = {};
    this.resource[path.extension] = made;
    return made;
  }

  private applyAt(op: 'add' | 'replace' | 'remove', path: ScimPath, value: unknown) {
    const definition = path.definition;
    // Attributes the schema does not have are ignored; a password is never kept.
    if (!definition || definition.mutability === 'writeOnly') return;
    const named =
      path.subAttribute === undefined ? definition.name : `${definition.name}.${path.subAttribute}`;
    if (definition.mutability === 'readOnly' || path.subDefinition?.mutability === 'readOnly') {
      const current = valuesAt(this.resource, path);
      const same = op !== 'remove' && sameJson(current.length === 1 ? current[0] : current, value);
      if (!same) throw mutability(`${named} is read-only`);
      return;
    }
    if (path.subAttribute !== undefined && !path.subDefinition) return;
    if (definition.multiValued) {
      this.applyMultiValued(op, path, definition, value);
      return;
    }
    const container = this.container(path, op !== 'remove');
    if (!container) return;
    if (path.subAttribute !== undefined) {
      const parent = isObject(container[definition.name])
        ? (container[definition.name] as Record<string, unknown>)
        : {};
      if (op === 'remove') delete parent[path.subAttribute];
      else {
        const canonical = canonicalValue(value, path.subDefinition!, named);
        if (canonical === undefined) delete parent[path.subAttribute];
        else parent[path.subAttribute] = canonical;
      }
      if (Object.keys(parent).length > 0) container[definition.name] = parent;
      else delete container[definition.name];
      return;
    }
    if (op === 'remove') {
      delete container[definition.name];
      return;
    }
    const canonical = canonicalValue(value, definition, named);
    if (canonical === undefined) delete container[definition.name];
    else if (definition.type === 'complex' && isObject(container[definition.name]))
      // A complex attribute's sub-attributes not named keep their values (add and replace alike).
      container[definition.name] = { ...(container[definition.name] as object), ...(canonical as object) };
    else container[definition.name] = canonical;
  }

  private applyMultiValued(
    op: 'add' | 'replace' | 'remove',
    path: ScimPath,
    definition: AttributeDefinition,
    value: unknown,
  ) {
    const container = this.container(path, op !== 'remove');
    if (!container) return;
    const current = Array.isArray(container[definition.name])
      ? (container[definition.name] as unknown[])
      : [];
    const named = definition.name;
    const where = path.where;
    let items: unknown[];
    const chosen = new Set<unknown>();
    if (!where) {
      if (path.subAttribute !== undefined)
        throw invalidPath(
          `path: ${named} holds several values: select them with a filter (${named}[type eq "work"].${path.subAttribute})`,
        );
      if (op === 'remove') {
        // With a value list (Entra's member removal), only those values go; without, all of them.
        if (value === undefined || value === null) items = [];
        else {
          const gone = new Set(
            (canonicalValue(value, definition, named) as unknown[]).map((item) => identity(item, definition)),
          );
          items = current.filter((item) => !gone.has(identity(item, definition)));
        }
      } else {
        const incoming = (canonicalValue(value, definition, named) as unknown[] | undefined) ?? [];
        for (const item of incoming) chosen.add(item);
        if (op === 'replace') items = incoming;
        else {
          items = [...current];
          for (const item of incoming) {
            const key = identity(item, definition);
            const at = items.findIndex((existing) => identity(existing, definition) === key);
            if (at === -1) items.push(item);
            else {
              const merged =
                isObject(items[at]) && isObject(item) ? { ...(items[at] as object), ...item } : item;
              chosen.add(merged);
              items[at] = merged;
            }
          }
        }
      }
    } else {
      const matched = current.filter((item) => isObject(item) && matches(where, item));
      if (op === 'remove') {
        if (path.subAttribute === undefined) items = current.filter((item) => !matched.includes(item));
        else {
          const sub = path.subAttribute;
          items = current.map((item) => {
            if (!matched.includes(item) || !isObject(item)) return item;
            const { [sub]: _removed, ...rest } = item;
            return rest;
          });
        }
      } else if (matched.length === 0) {
        // Entra adds (or replaces) `emails[type eq "work"].value` when the person has no work email yet.
        const fields = equalities(where);
        if (!fields || (op === 'replace' && path.subAttribute === undefined))
          throw noTarget(`path: no value of ${named} matches the filter`);
        const made =
          path.subAttribute === undefined
            ? { ...fields, ...(isObject(value) ? value : {}) }
            : { ...fields, [path.subAttribute]: value };
        const [item] = canonicalValue([made], definition, named) as unknown[];
        chosen.add(item);
        items = [...current, item];
      } else {
        items = current.map((item) => {
          if (!matched.includes(item) || !isObject(item)) return item;
          const replacement =
            path.subAttribute === undefined
              ? (
                  canonicalValue(
                    [op === 'add' ? { ...item, ...(isObject(value) ? value : {}) } : value],
                    definition,
                    named,
                  ) as unknown[]
                )[0]
              : (
                  canonicalValue([{ ...item, [path.subAttribute]: value }], definition, named) as unknown[]
                )[0];
          chosen.add(replacement);
          return replacement;
        });
      }
    }
    onePrimary(items, chosen);
    if (items.length > 0) container[definition.name] = items;
    else delete container[definition.name];
    if (path.extension !== undefined && Object.keys(container).length === 0)
      delete this.resource[path.extension];
  }
}

/** The resource after the operations, in order (the input is left as it was); 400 naming the operation that failed. */
export function applyPatch(
  resource: ScimResource,
  operations: PatchOperation[],
  type: ResourceType,
): ScimResource {
  const patcher = new Patcher(resource, type);
  for (const operation of operations) patcher.apply(operation);
  return patcher.result();
}
