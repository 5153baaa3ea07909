/**
 * JSON Merge Patch (RFC 7396): what every PATCH of the admin API applies. An object in the patch is merged
 * field by field, `null` removes a field, anything else (arrays included) replaces the target's value whole.
 * Neither argument is changed.
 */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const merged: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [field, value] of Object.entries(patch)) {
    if (value === null) delete merged[field];
    else merged[field] = mergePatch(merged[field], value);
  }
  return merged;
}

/** A JSON object (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Copies the members of a JSON object a schema does not declare, after the ones it read, in the order they came,
 * as a zod loose object keeps them (the hand readers of plain shapes). False on a `__proto__` member, which zod
 * drops and an assignment here would make the target's prototype: the caller then leaves the value to zod.
 */
export function copyUndeclared(
  target: Record<string, unknown>,
  source: Record<string, unknown>,
  declared: ReadonlySet<string>,
): boolean {
  for (const name in source) {
    if (declared.has(name)) continue;
    if (name === '__proto__') return false;
    target[name] = source[name];
  }
  return true;
}
