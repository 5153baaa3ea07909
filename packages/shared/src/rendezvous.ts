import { createHash } from 'node:crypto';

/** A uniform number in (0, 1) from the text: 48 bits of its SHA-256, never 0 or 1 (its logarithm is finite, negative). */
function unitHash(text: string): number {
  const bits = createHash('sha256').update(text).digest().readUIntBE(0, 6);
  return (bits + 0.5) / 2 ** 48;
}

/**
 * Weighted rendezvous (highest random weight) hashing's score of one candidate for one affinity: the highest
 * wins. The same affinity meets the same candidate; one that leaves or joins moves only the affinities it wins
 * or won; each wins a share proportional to its weight. cache_affinity uses it for the provider (governance)
 * and for the provider key (router) of a conversation (docs/routing.md).
 */
export function rendezvousScore(affinity: string, id: string, weight: number): number {
  if (weight <= 0) return Number.NEGATIVE_INFINITY;
  return -weight / Math.log(unitHash(`${affinity}\u0000${id}`));
}
