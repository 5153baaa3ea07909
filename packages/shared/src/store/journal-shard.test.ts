import { randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { JOURNAL_SHARDS, journalShard } from './journal-shard.ts';

it('gives an id the same shard every time, one of the journal’s, whatever its length and characters', () => {
  const ids = ['', 'res_\ud800lone-surrogate', `res_é😀${randomUUID()}`, 'x'.repeat(10_000)];
  for (const id of ids) {
    const shard = journalShard(id);
    expect(Number.isInteger(shard) && shard >= 0 && shard < JOURNAL_SHARDS, id).toBe(true);
    expect(journalShard(id)).toBe(shard);
  }
  // Fixed values: a reservation recorded by one release is found by the next (a change of hash needs a move of
  // the open reservations, as redis-migration.ts's reshardJournal made for the SHA-1 of earlier releases).
  expect(['res_a', 'res_b', '', 'res_01a23c0a-db59-75a9-b7a6-2f7f7605539a'].map(journalShard)).toEqual([
    46, 55, 25, 12,
  ]);
});

it('spreads reservation ids evenly over the shards (so over a Cluster’s masters)', () => {
  const counts = new Array<number>(JOURNAL_SHARDS).fill(0);
  const ids = 64_000;
  for (let index = 0; index < ids; index++) counts[journalShard(`res_${randomUUID()}`)]!++;
  // 1,000 a shard expected; a binomial spread of about 31, so ±15 % is about five of it.
  expect(Math.min(...counts)).toBeGreaterThan(850);
  expect(Math.max(...counts)).toBeLessThan(1_150);
});
