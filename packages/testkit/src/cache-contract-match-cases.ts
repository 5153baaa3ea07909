import { expect } from 'vitest';
import { cacheKeys } from '../../cache/src/index.ts';
import { base, type CaseContext, keysOf, request, unique } from './cache-contract-helpers.ts';
import { wholeAnswer } from './cache-fixtures.ts';

/** Exact and semantic matches: what is found, and what never is. */
export function matchCases({ contractCase, open }: CaseContext): void {
  contractCase('an exact hit answers the stored entry, another hash misses', async () => {
    const cache = await open();
    const scope = unique('key');
    const keys = keysOf('What is the capital of France?');
    const stored = await cache.store({ ...base(scope, keys), answer: wholeAnswer('Paris.') });
    expect(stored).toEqual({ stored: true, id: expect.any(String) });
    const hit = await cache.lookup({ scope, hash: keys.exact });
    expect(hit?.hit).toBe('exact');
    expect(hit?.similarity).toBe(1);
    expect(hit?.entry.id).toBe(stored.stored && stored.id);
    expect(hit?.entry.answer).toEqual(wholeAnswer('Paris.'));
    expect(hit?.entry).toMatchObject({ scope, hash: keys.exact, provider: 'openai', model: 'gpt-4o-mini' });
    expect(
      await cache.lookup({ scope, hash: keysOf('What is the capital of Spain?').exact }),
    ).toBeUndefined();
    expect(cache.stats()).toMatchObject({ exactHits: 1, misses: 1, stores: 1 });
  });

  contractCase('the exact hash is the same whatever the order of JSON keys, and ignores stream', async () => {
    const cache = await open();
    const scope = unique('key');
    const first = cacheKeys({
      provider: 'openai',
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'hi' }],
      params: {
        temperature: 0,
        response_format: { type: 'json_schema', json_schema: { name: 'a', strict: true } },
      },
    });
    const reordered = cacheKeys({
      params: {
        stream: true,
        response_format: { json_schema: { strict: true, name: 'a' }, type: 'json_schema' },
        temperature: 0,
      },
      messages: [{ content: 'hi', role: 'user' }],
      model: 'gpt-4o-mini',
      provider: 'openai',
    });
    expect(reordered).toEqual(first);
    await cache.store({ ...base(scope, first), answer: wholeAnswer('hello') });
    expect((await cache.lookup({ scope, hash: reordered.exact }))?.hit).toBe('exact');
  });

  contractCase('a semantic hit above the threshold, a miss below it', async () => {
    const cache = await open();
    const scope = unique('key');
    const keys = keysOf('How tall is the Eiffel tower?');
    await cache.store({ ...base(scope, keys), vector: [1, 0, 0, 0], answer: wholeAnswer('330 m') });
    const other = keysOf('What is the height of the Eiffel tower?');
    const near = await cache.lookup({
      scope,
      hash: other.exact,
      context: other.context,
      vector: [0.9, 0.1, 0, 0],
    });
    expect(near?.hit).toBe('semantic');
    expect(near?.similarity).toBeCloseTo(0.9 / Math.hypot(0.9, 0.1), 5);
    expect(near?.entry.answer).toEqual(wholeAnswer('330 m'));
    // cos = 0.6 < 0.8, the default threshold.
    expect(
      await cache.lookup({ scope, hash: other.exact, context: other.context, vector: [0.6, 0.8, 0, 0] }),
    ).toBeUndefined();
  });

  contractCase('a per-request threshold overrides the default', async () => {
    const cache = await open();
    const scope = unique('key');
    const keys = keysOf('Name a red fruit');
    await cache.store({ ...base(scope, keys), vector: [1, 0, 0, 0], answer: wholeAnswer('A cherry.') });
    const query = { scope, hash: keysOf('Give me a red fruit').exact, context: keys.context };
    const loose = await cache.lookup({ ...query, vector: [0.6, 0.8, 0, 0], threshold: 0.55 });
    expect(loose?.similarity).toBeCloseTo(0.6, 5);
    expect(await cache.lookup({ ...query, vector: [0.6, 0.8, 0, 0], threshold: 0.65 })).toBeUndefined();
    expect(await cache.lookup({ ...query, vector: [0.99, 0.14, 0, 0], threshold: 0.999 })).toBeUndefined();
  });

  contractCase('semantic matches stay within a context, and types limit the kind of match', async () => {
    const cache = await open();
    const scope = unique('key');
    const keys = keysOf('Translate "cat" to French');
    await cache.store({ ...base(scope, keys), vector: [0, 1, 0, 0], answer: wholeAnswer('chat') });
    const otherParams = cacheKeys({
      ...request('Translate "cat" to French'),
      params: { temperature: 1.5 },
    });
    expect(
      await cache.lookup({
        scope,
        hash: otherParams.exact,
        context: otherParams.context,
        vector: [0, 1, 0, 0],
      }),
    ).toBeUndefined();
    const similar = {
      scope,
      hash: keysOf('French for "cat"?').exact,
      context: keys.context,
      vector: [0, 1, 0, 0],
    };
    expect(await cache.lookup({ ...similar, types: ['exact'] })).toBeUndefined();
    expect((await cache.lookup({ ...similar, types: ['semantic'] }))?.hit).toBe('semantic');
    const exactOnly = { scope, hash: keys.exact, context: keys.context, vector: [0, 1, 0, 0] };
    expect((await cache.lookup({ ...exactOnly, types: ['semantic'] }))?.hit).toBe('semantic');
    expect((await cache.lookup(exactOnly))?.hit).toBe('exact');
  });

  contractCase('entries are never served across scopes', async () => {
    const cache = await open();
    const [mine, theirs] = [unique('key'), unique('key')];
    const keys = keysOf('my secret question');
    await cache.store({
      ...base(mine, keys),
      vector: [0, 0, 1, 0],
      answer: wholeAnswer('my secret answer'),
    });
    const probe = { hash: keys.exact, context: keys.context, vector: [0, 0, 1, 0] };
    expect(await cache.lookup({ scope: theirs, ...probe })).toBeUndefined();
    expect(await cache.clearScope(theirs)).toBe(0);
    expect((await cache.lookup({ scope: mine, ...probe }))?.entry.answer).toEqual(
      wholeAnswer('my secret answer'),
    );
  });
}
