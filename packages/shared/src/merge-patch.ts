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
