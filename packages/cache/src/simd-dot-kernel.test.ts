import { describe, expect, it } from 'vitest';
import { createDotKernel, paddedLength } from './simd-dot-kernel.ts';

function referenceDot(left: ArrayLike<number>, right: ArrayLike<number>): number {
  let sum = 0;
  for (let index = 0; index < left.length; index++) sum += left[index]! * right[index]!;
  return sum;
}

const random = (length: number) => Array.from({ length }, () => Math.random() * 2 - 1);

describe('the SIMD dot kernel', () => {
  it('pads lengths to 8 floats', () => {
    expect([1, 7, 8, 9, 1536].map(paddedLength)).toEqual([8, 8, 8, 16, 1536]);
  });

  for (const dimensions of [1, 7, 8, 9, 100, 1536]) {
    it(`computes the dot products of ${dimensions}-dimensional rows as a plain loop does`, () => {
      const stride = paddedLength(dimensions);
      const count = 37;
      const rows = Array.from({ length: count }, () => random(dimensions));
      const query = random(dimensions);
      // Layout: query, then scores, then rows, as VectorPartition lays them out.
      const { floats, dots } = createDotKernel(stride + count + count * stride);
      floats.set(query, 0);
      for (const [position, row] of rows.entries()) floats.set(row, stride + count + position * stride);
      dots(0, (stride + count) * 4, count, stride * 4, stride * 4);
      const scores = Array.from(floats.subarray(stride, stride + count));
      const expected = rows.map((row) => referenceDot(Float32Array.from(row), Float32Array.from(query)));
      for (const [position, score] of scores.entries()) expect(score).toBeCloseTo(expected[position]!, 4);
    });
  }

  it('writes nothing for no rows', () => {
    const { floats, dots } = createDotKernel(16);
    floats.fill(7);
    dots(0, 32, 0, 32, 32);
    expect(Array.from(floats)).toEqual(new Array(16).fill(7));
  });
});
