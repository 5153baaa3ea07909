/**
 * The vector as a unit Float32Array (a copy), so cosine similarity is a dot product; undefined for a vector
 * with no direction (all zeros) or a value that is not finite.
 */
export function normalise(vector: ArrayLike<number>): Float32Array | undefined {
  let norm = 0;
  for (let index = 0; index < vector.length; index++) {
    const value = vector[index]!;
    norm += value * value;
  }
  norm = Math.sqrt(norm);
  if (!(norm > 0) || !Number.isFinite(norm)) return undefined;
  const unit = new Float32Array(vector.length);
  for (let index = 0; index < vector.length; index++) unit[index] = vector[index]! / norm;
  return unit;
}
