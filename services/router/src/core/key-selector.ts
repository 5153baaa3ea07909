import type { ResolvedKey } from './providers/adapter.ts';

export interface SelectableKey extends ResolvedKey {
  weight: number;
  /** Empty: every model. */
  models: readonly string[];
}

export interface KeySelection {
  model: string;
  /** Key ids a virtual key allows; undefined or containing `*` means all. */
  allowedIds?: readonly string[] | undefined;
  /** Keys rotated out by earlier attempts of this request. */
  excluded: ReadonlySet<string>;
}

function eligible(key: SelectableKey, selection: KeySelection): boolean {
  if (key.weight <= 0) return false;
  if (key.models.length > 0 && !key.models.includes(selection.model)) return false;
  const allowed = selection.allowedIds;
  return !allowed || allowed.includes('*') || allowed.includes(key.id);
}

/**
 * Weighted random choice among the keys that may serve the model. Keys rotated out are avoided while any
 * other eligible key remains; when all were rotated out the least bad choice is still a key.
 */
export function selectKey(
  keys: readonly SelectableKey[],
  selection: KeySelection,
  random: () => number = Math.random,
): SelectableKey | undefined {
  const candidates = keys.filter((key) => eligible(key, selection));
  if (candidates.length === 0) return undefined;
  const fresh = candidates.filter((key) => !selection.excluded.has(key.id));
  const pool = fresh.length > 0 ? fresh : candidates;
  if (pool.length === 1) return pool[0];
  const total = pool.reduce((sum, key) => sum + key.weight, 0);
  let point = random() * total;
  for (const key of pool) {
    point -= key.weight;
    if (point < 0) return key;
  }
  return pool[pool.length - 1];
}
