import { describe, expect, it } from 'vitest';
import { CacheIndex, type IndexRecord } from './cache-index.ts';
import { normalise } from './vector-math.ts';

let clock = 0;
const now = () => clock;

function record(id: string, vector?: number[], overrides: Partial<IndexRecord> = {}): IndexRecord {
  return {
    id,
    scope: 'scope',
    hash: `hash-${id}`,
    context: 'context',
    createdAt: clock,
    expiresAt: clock + 1_000,
    vector: vector && normalise(vector),
    ...overrides,
  };
}

const query = (vector: number[], threshold = 0.8) => ({
  scope: 'scope',
  context: 'context',
  vector: normalise(vector)!,
  threshold,
});

describe('CacheIndex', () => {
  it('finds the nearest vector of the scope and context, exhaustively', () => {
    const index = new CacheIndex({ now, maxEntriesPerScope: 100 });
    for (let position = 0; position < 50; position++) {
      index.add(record(`r${position}`, [Math.cos(position / 10), Math.sin(position / 10), 0]));
    }
    index.add(record('elsewhere', [1, 0, 0], { context: 'other' }));
    const found = index.nearest(query([Math.cos(2.04), Math.sin(2.04), 0]));
    expect(found?.record.id).toBe('r20');
    expect(found?.similarity).toBeCloseTo(Math.cos(0.04), 5);
    expect(index.nearest({ ...query([1, 0, 0]), scope: 'another' })).toBeUndefined();
    expect(index.nearest(query([0, 0, 1]))).toBeUndefined();
  });

  it('removes rows without leaving holes: every remaining row is still found', () => {
    const index = new CacheIndex({ now, maxEntriesPerScope: 100 });
    const axes = [0, 1, 2, 3, 4, 5].map((axis) =>
      Array.from({ length: 6 }, (_, position) => (position === axis ? 1 : 0)),
    );
    for (const [axis, vector] of axes.entries()) index.add(record(`a${axis}`, vector));
    expect(index.remove('scope', 'a1')?.id).toBe('a1');
    expect(index.remove('scope', 'a4')?.id).toBe('a4');
    expect(index.remove('scope', 'a4')).toBeUndefined();
    const found = axes.map((vector) => index.nearest(query(vector, 0.99))?.record.id);
    expect(found).toEqual(['a0', undefined, 'a2', 'a3', undefined, 'a5']);
    expect(index.byHash('scope', 'hash-a1')).toBeUndefined();
    expect(index.byId('scope', 'a5')?.hash).toBe('hash-a5');
  });

  it('evicts the oldest entries past the bound, and reports what left', () => {
    const index = new CacheIndex({ now, maxEntriesPerScope: 2 });
    index.add(record('one', [1, 0]));
    index.add(record('two'));
    expect(index.add(record('three', [1, 0.1])).map((left) => left.id)).toEqual(['one']);
    expect(index.size('scope')).toBe(2);
    expect(index.nearest(query([1, 0]))?.record.id).toBe('three');
    // A replacement of the same hash frees its own place: nothing else is evicted.
    expect(index.add(record('two-again', undefined, { hash: 'hash-two' })).map((left) => left.id)).toEqual([
      'two',
    ]);
    expect(index.byHash('scope', 'hash-three')?.id).toBe('three');
  });

  it('keeps evicting the oldest in insertion order over many stores, replacements and a cleared scope', () => {
    const bound = 5;
    const index = new CacheIndex({ now, maxEntriesPerScope: bound });
    // What the index should hold, oldest first, with each entry's hash: a replacement (same hash) moves to the end.
    let expected: Array<{ id: string; hash: string }> = [];
    const evicted: string[] = [];
    const store = (id: string, hash = `hash-${id}`) => {
      const left = index.add(record(id, undefined, { hash })).map((gone) => gone.id);
      evicted.push(...left);
      const replaced = expected.filter((held) => held.hash === hash || held.id === id).map((held) => held.id);
      expected = [...expected.filter((held) => !replaced.includes(held.id)), { id, hash }];
      const overflow = expected.slice(0, Math.max(0, expected.length - bound)).map((held) => held.id);
      expected = expected.slice(overflow.length);
      expect(left).toEqual([...replaced, ...overflow]);
    };
    for (let round = 0; round < 3; round++) {
      for (let n = 0; n < 40; n++) {
        store(`r${round}-${n}`);
        // Every seventh store replaces an entry still held by its hash, moving it to the end.
        if (n % 7 === 3) store(`x${round}-${n}`, expected[1]!.hash);
      }
      expect(index.size('scope')).toBe(bound);
      for (const held of expected) expect(index.byHash('scope', held.hash)?.id).toBe(held.id);
      // A cleared scope starts over: the next stores evict among its new entries only.
      expect(index.clearScope('scope')).toHaveLength(bound);
      expected = [];
    }
    expect(evicted.length).toBeGreaterThan(100);
  });

  it('makes room in a full scope with its expired entries first, looking for them at most once a second', () => {
    const index = new CacheIndex({ now, maxEntriesPerScope: 3 });
    index.add(record('a'));
    index.add(record('b', undefined, { expiresAt: clock + 10 }));
    index.add(record('c', undefined, { expiresAt: clock + 20 }));
    clock += 10;
    // Full, and b has expired: b makes room, not the oldest.
    expect(index.add(record('d')).map((left) => left.id)).toEqual(['b']);
    clock += 10;
    // c has expired too, but the scope was swept less than a second ago: the oldest makes room, at O(1).
    expect(index.add(record('e')).map((left) => left.id)).toEqual(['a']);
    clock += 1_000;
    // A second later every expired entry goes before anything live would.
    expect(index.add(record('f')).map((left) => left.id)).toEqual(['c', 'd', 'e']);
  });

  it('skips expired entries at once and sweeps them later', () => {
    const index = new CacheIndex({ now, maxEntriesPerScope: 10 });
    index.add(record('old', [1, 0], { expiresAt: clock + 10 }));
    index.add(record('young', [0, 1], { expiresAt: clock + 100 }));
    clock += 10;
    expect(index.nearest(query([1, 0]))).toBeUndefined();
    expect(index.byHash('scope', 'hash-old')).toBeUndefined();
    expect(index.sweep()).toEqual([]);
    clock += 90;
    expect(index.sweep().map((left) => left.id)).toEqual(['young']);
    expect(index.size('scope')).toBe(0);
  });

  it('lets vectors of a new length replace the context’s old ones, never comparing the two', () => {
    const index = new CacheIndex({ now, maxEntriesPerScope: 10 });
    index.add(record('small', [1, 0]));
    expect(index.add(record('large', [1, 0, 0])).map((left) => left.id)).toEqual(['small']);
    expect(index.nearest(query([1, 0]))).toBeUndefined();
    expect(index.nearest(query([1, 0, 0]))?.record.id).toBe('large');
  });

  it('grows and shrinks its slab as rows come and go', () => {
    const index = new CacheIndex({ now, maxEntriesPerScope: 1_000 });
    for (let position = 0; position < 500; position++) index.add(record(`r${position}`, [position + 1, 1]));
    for (let position = 0; position < 499; position++) index.remove('scope', `r${position}`);
    expect(index.nearest(query([500, 1], 0.9999))?.record.id).toBe('r499');
    expect(index.clearScope('scope').map((left) => left.id)).toEqual(['r499']);
  });
});
