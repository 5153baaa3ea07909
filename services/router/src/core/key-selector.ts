import { rendezvousScore } from '@gw/shared';
import { type HealthBoard, healthId } from '@gw/shared/health';
import type { ResolvedKey } from './providers/adapter.ts';

export interface SelectableKey extends ResolvedKey {
  weight: number;
  /** Empty: every model. */
  models: readonly string[];
  /** Requests and tokens a minute the provider allows it per model (`rpm_limit`, `tpm_limit`). */
  rpmLimit?: number | undefined;
  tpmLimit?: number | undefined;
}

export interface KeySelection {
  model: string;
  /** Key ids a virtual key allows; undefined or containing `*` means all. */
  allowedIds?: readonly string[] | undefined;
  /** Keys rotated out by earlier attempts of this request. */
  excluded: ReadonlySet<string>;
  /**
   * cache_affinity (docs/routing.md): a hash of the conversation's prefix. With it the key is chosen by rendezvous
   * hashing instead of at random, so every request of one conversation meets the same provider prompt cache.
   */
  affinity?: string | undefined;
}

function eligible(key: SelectableKey, selection: KeySelection): boolean {
  if (key.weight <= 0) return false;
  if (key.models.length > 0 && !key.models.includes(selection.model)) return false;
  const allowed = selection.allowedIds;
  return !allowed || allowed.includes('*') || allowed.includes(key.id);
}

/**
 * Weighted random choice among the keys that may serve the model, their weights multiplied by their health for
 * this model (a key Failed for it is left out while another can serve, except for its probe). Keys rotated out are avoided while
 * any other eligible key remains; when all were rotated out the least bad choice is still a key. With an
 * affinity the choice among the same keys is by rendezvous hashing rather than at random.
 */
export function selectKey(
  keys: readonly SelectableKey[],
  selection: KeySelection,
  options: { provider: string; health?: HealthBoard | undefined; random?: (() => number) | undefined },
): SelectableKey | undefined {
  const candidates = keys.filter((key) => eligible(key, selection));
  if (candidates.length === 0) return undefined;
  const fresh = candidates.filter((key) => !selection.excluded.has(key.id));
  const pool = withRoom(fresh.length > 0 ? fresh : candidates, selection.model, options);
  if (pool.length === 1) return pool[0];
  let weights = pool.map((key) => key.weight);
  if (options.health) {
    const weighed = options.health.weigh(
      pool.map((key) => ({
        ids: [healthId.target(options.provider, key.id, selection.model)],
        weight: key.weight,
      })),
    );
    if (weighed.probe !== undefined) return pool[weighed.probe];
    weights = weighed.weights;
  }
  if (selection.affinity !== undefined) {
    return rendezvous(
      pool.map((key, index) => ({ key, weight: weights[index]! })),
      selection.affinity,
    );
  }
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  let point = (options.random ?? Math.random)() * total;
  for (const [index, key] of pool.entries()) {
    point -= weights[index]!;
    if (point < 0) return key;
  }
  return pool[pool.length - 1];
}

/** The key of the pool with the highest rendezvous score for the affinity (rendezvousScore of @gw/shared). */
function rendezvous(
  pool: ReadonlyArray<{ key: SelectableKey; weight: number }>,
  affinity: string,
): SelectableKey {
  let best = pool[0]!.key;
  let bestScore = Number.NEGATIVE_INFINITY;
  for (const { key, weight } of pool) {
    const score = rendezvousScore(affinity, key.id, weight);
    if (score > bestScore) {
      best = key;
      bestScore = score;
    }
  }
  return best;
}

/**
 * The keys that have room this minute: a key whose use of the model (every replica's requests and tokens of the
 * last minute, as the health board counts them) reached its `rpm_limit` or `tpm_limit` is left out while
 * another key has room; when none has, all stay (the provider's own 429 then rotates them).
 */
function withRoom(
  keys: readonly SelectableKey[],
  model: string,
  options: { provider: string; health?: HealthBoard | undefined },
): readonly SelectableKey[] {
  const { health } = options;
  if (!health || !keys.some(isLimited)) return keys;
  const open = keys.filter((key) => {
    if (!isLimited(key)) return true;
    const use = health.signals(healthId.target(options.provider, key.id, model));
    return (
      (key.rpmLimit === undefined || use.requestsPerMinute < key.rpmLimit) &&
      (key.tpmLimit === undefined || use.tokensPerMinute < key.tpmLimit)
    );
  });
  return open.length > 0 ? open : keys;
}

const isLimited = (key: SelectableKey) => key.rpmLimit !== undefined || key.tpmLimit !== undefined;
