import { createDotKernel, type DotsFunction, paddedLength } from './simd-dot-kernel.ts';

/** A row's owner: what the partition hands back for the nearest row. */
export interface VectorRow {
  id: string;
  expiresAt: number;
}

/** A partition never shrinks below this many rows, nor grows by fewer. */
const MIN_CAPACITY = 16;

/**
 * The vectors of one scope and context, searched exhaustively by the SIMD kernel (simd-dot-kernel.ts). They
 * live in a WebAssembly memory of the partition's own, laid out in floats as
 * `[query: stride][scores: capacity][rows: capacity × stride]`, where stride is the dimension count padded
 * to 8. Contiguous rows read at memory speed; a row is removed by moving the last row into its place, so
 * the rows never have holes and a search never reads a dead one.
 */
export class VectorPartition<Row extends VectorRow> {
  readonly dimensions: number;
  private readonly stride: number;
  private readonly rows: Row[] = [];
  private readonly rowOf = new Map<string, number>();
  private capacity = 0;
  private floats: Float32Array = new Float32Array(0);
  private dots: DotsFunction = () => undefined;

  constructor(dimensions: number) {
    this.dimensions = dimensions;
    this.stride = paddedLength(dimensions);
    this.resize(MIN_CAPACITY);
  }

  get size(): number {
    return this.rows.length;
  }

  /** Adds a unit vector of `dimensions` numbers for the row (its id not yet in the partition). */
  add(row: Row, vector: Float32Array): void {
    const position = this.rows.length;
    if (position === this.capacity) this.resize(this.capacity * 2);
    this.floats.set(vector, this.rowsAt() + position * this.stride);
    this.rows.push(row);
    this.rowOf.set(row.id, position);
  }

  remove(id: string): boolean {
    const position = this.rowOf.get(id);
    if (position === undefined) return false;
    this.rowOf.delete(id);
    const last = this.rows.length - 1;
    const moved = this.rows.pop()!;
    if (position !== last) {
      this.rows[position] = moved;
      this.rowOf.set(moved.id, position);
      const rowsAt = this.rowsAt();
      this.floats.copyWithin(
        rowsAt + position * this.stride,
        rowsAt + last * this.stride,
        rowsAt + (last + 1) * this.stride,
      );
    }
    if (this.rows.length * 4 < this.capacity && this.capacity > MIN_CAPACITY) {
      this.resize(Math.max(MIN_CAPACITY, this.rows.length * 2));
    }
    return true;
  }

  /**
   * The live row most similar to the unit vector `query`, when its similarity reaches `threshold`. Rows that
   * expired (at `now`) are skipped.
   */
  nearest(query: Float32Array, threshold: number, now: number): { row: Row; similarity: number } | undefined {
    const { floats, rows, stride } = this;
    // The query's padding stays zero: only its first `dimensions` floats are ever written.
    floats.set(query, 0);
    this.dots(0, this.rowsAt() * 4, rows.length, stride * 4, stride * 4);
    let best = -Infinity;
    let bestRow: Row | undefined;
    for (let position = 0; position < rows.length; position++) {
      const similarity = floats[stride + position]!;
      if (similarity > best && rows[position]!.expiresAt > now) {
        best = similarity;
        bestRow = rows[position];
      }
    }
    // Rounding can put a vector's similarity with itself a hair above 1.
    return bestRow !== undefined && best >= threshold
      ? { row: bestRow, similarity: Math.min(best, 1) }
      : undefined;
  }

  /** The first row's offset, in floats. */
  private rowsAt(): number {
    return this.stride + this.capacity;
  }

  /** Moves the rows to a new memory of `capacity` rows (a WebAssembly memory cannot shrink). */
  private resize(capacity: number): void {
    const floatCount = this.stride + capacity + capacity * this.stride;
    const { floats, dots } = createDotKernel(floatCount);
    const from = this.rowsAt();
    floats.set(this.floats.subarray(from, from + this.rows.length * this.stride), this.stride + capacity);
    this.floats = floats;
    this.capacity = capacity;
    this.dots = dots;
  }
}
