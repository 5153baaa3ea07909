import { hash, randomUUID } from 'node:crypto';
import { expect, it } from 'vitest';
import { JOURNAL_SHARDS, journalShard, sha1FirstWord } from './journal-shard.ts';

/** What releases before the one-block SHA-1 hashed a reservation id to. */
function recordedShard(id: string): number {
  return hash('sha1', id, 'buffer').readUInt32BE(0) % JOURNAL_SHARDS;
}

it('finds every reservation in the shard earlier releases recorded it in, whatever its length and characters', () => {
  const ids = [''];
  for (let length = 1; length <= 70; length++)
    ids.push('x'.repeat(length), `res_${randomUUID()}`.slice(0, length));
  for (let index = 0; index < 200; index++) ids.push(`res_${randomUUID()}`, `res_é😀${randomUUID()}`);
  ids.push('res_\ud800lone-surrogate');
  for (const id of ids) expect(journalShard(id), id).toBe(recordedShard(id));
});

it('hashes ids of one SHA-1 block itself, and leaves longer ones to node:crypto', () => {
  const fits = 'a'.repeat(55);
  expect(sha1FirstWord(fits)).toBe(hash('sha1', fits, 'buffer').readUInt32BE(0));
  expect(sha1FirstWord('a'.repeat(56))).toBeUndefined();
  // Two bytes of UTF-8 each: 28 of them are 56 bytes.
  expect(sha1FirstWord('é'.repeat(28))).toBeUndefined();
});
