import { expect, vi } from 'vitest';
import {
  base,
  type CaseContext,
  DELIVERY_TIMEOUT_MS,
  keysOf,
  MINUTE,
  unique,
} from './cache-contract-helpers.ts';
import { wholeAnswer } from './cache-fixtures.ts';

/** Expiry, replicas, deletes, replacement and eviction. */
export function lifecycleCases({ contractCase, open, advance }: CaseContext): void {
  contractCase('entries expire by the injected clock: the request TTL, else 5 minutes', async () => {
    const cache = await open();
    const scope = unique('key');
    const [short, usual] = [keysOf('short-lived'), keysOf('default TTL')];
    await cache.store({
      ...base(scope, short),
      vector: [1, 1, 0, 0],
      ttlMs: MINUTE,
      answer: wholeAnswer('a'),
    });
    await cache.store({ ...base(scope, usual), answer: wholeAnswer('b') });
    const similar = { scope, hash: keysOf('other').exact, context: short.context, vector: [1, 1, 0, 0] };
    advance(MINUTE - 1);
    expect((await cache.lookup({ scope, hash: short.exact }))?.hit).toBe('exact');
    expect((await cache.lookup(similar))?.hit).toBe('semantic');
    advance(2);
    expect(await cache.lookup({ scope, hash: short.exact })).toBeUndefined();
    expect(await cache.lookup(similar)).toBeUndefined();
    advance(4 * MINUTE - 2);
    expect((await cache.lookup({ scope, hash: usual.exact }))?.hit).toBe('exact');
    advance(2);
    expect(await cache.lookup({ scope, hash: usual.exact })).toBeUndefined();
  });

  contractCase('an entry written by one instance is found by another', async () => {
    const [writer, reader] = [await open(), await open()];
    const scope = unique('key');
    const keys = keysOf('shared across replicas');
    const stored = await writer.store({
      ...base(scope, keys),
      vector: [0, 0, 0, 1],
      answer: wholeAnswer('yes'),
    });
    const probe = {
      scope,
      hash: keysOf('across replicas?').exact,
      context: keys.context,
      vector: [0, 0, 0, 1],
    };
    await vi.waitFor(async () => {
      expect((await reader.lookup({ scope, hash: keys.exact }))?.entry.id).toBe(stored.stored && stored.id);
      expect((await reader.lookup(probe))?.hit).toBe('semantic');
    }, DELIVERY_TIMEOUT_MS);
    expect(await reader.deleteByHash(scope, keys.exact)).toBe(true);
    await vi.waitFor(async () => expect(await writer.lookup(probe)).toBeUndefined(), DELIVERY_TIMEOUT_MS);
    expect(await writer.lookup({ scope, hash: keys.exact })).toBeUndefined();
  });

  contractCase('an entry, the entry of a hash, or a whole scope can be cleared', async () => {
    const cache = await open();
    const [scope, kept] = [unique('key'), unique('key')];
    const [one, two, three] = [keysOf('one'), keysOf('two'), keysOf('three')];
    const first = await cache.store({
      ...base(scope, one),
      vector: [1, 0, 1, 0],
      answer: wholeAnswer('1'),
    });
    await cache.store({ ...base(scope, two), answer: wholeAnswer('2') });
    await cache.store({ ...base(scope, three), answer: wholeAnswer('3') });
    await cache.store({ ...base(kept, one), answer: wholeAnswer('kept') });
    const id = first.stored ? first.id : '';
    expect(await cache.deleteEntry(scope, id)).toBe(true);
    expect(await cache.deleteEntry(scope, id)).toBe(false);
    expect(
      await cache.lookup({ scope, hash: one.exact, context: one.context, vector: [1, 0, 1, 0] }),
    ).toBeUndefined();
    expect(await cache.deleteByHash(scope, two.exact)).toBe(true);
    expect(await cache.deleteByHash(scope, two.exact)).toBe(false);
    expect(await cache.lookup({ scope, hash: two.exact })).toBeUndefined();
    expect(await cache.clearScope(scope)).toBe(1);
    expect(await cache.lookup({ scope, hash: three.exact })).toBeUndefined();
    expect((await cache.lookup({ scope: kept, hash: one.exact }))?.entry.answer).toEqual(wholeAnswer('kept'));
  });

  contractCase('a later answer to the same hash replaces the entry', async () => {
    const cache = await open();
    const scope = unique('key');
    const keys = keysOf('asked twice');
    const first = await cache.store({ ...base(scope, keys), answer: wholeAnswer('first') });
    const second = await cache.store({ ...base(scope, keys), answer: wholeAnswer('second') });
    const hit = await cache.lookup({ scope, hash: keys.exact });
    expect(hit?.entry.id).toBe(second.stored && second.id);
    expect(hit?.entry.answer).toEqual(wholeAnswer('second'));
    expect(await cache.deleteEntry(scope, first.stored ? first.id : '')).toBe(false);
  });

  contractCase('a full scope evicts its oldest entries', async () => {
    const cache = await open(3);
    const scope = unique('key');
    const keys = ['a', 'b', 'c', 'd', 'e'].map(keysOf);
    for (const [index, key] of keys.entries()) {
      advance(1);
      await cache.store({
        ...base(scope, key),
        vector: [1, index / 10, 0, 0],
        answer: wholeAnswer(String(index)),
      });
    }
    const found = await Promise.all(keys.map((key) => cache.lookup({ scope, hash: key.exact })));
    expect(found.map((hit) => hit?.hit)).toEqual([undefined, undefined, 'exact', 'exact', 'exact']);
    const evicted = keys[0]!;
    const nearest = await cache.lookup({
      scope,
      hash: keysOf('x').exact,
      context: evicted.context,
      vector: [1, 0, 0, 0],
    });
    expect(nearest?.entry.answer).toEqual(wholeAnswer('2'));
  });
}
