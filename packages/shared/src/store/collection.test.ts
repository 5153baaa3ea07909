import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineCollection, type InvalidDocument } from './collection.ts';
import { MemoryStore } from './memory-store.ts';

const widgetSchema = z.object({ name: z.string(), size: z.number().default(1) });

async function widgets() {
  const store = await MemoryStore.open({ dataDir: await mkdtemp(path.join(tmpdir(), 'gw-collection-')) });
  const reported: InvalidDocument[] = [];
  const collection = defineCollection(store, 'widgets', widgetSchema, {
    invalid: (document) => reported.push(document),
  });
  return { store, collection, reported };
}

describe('defineCollection', () => {
  it('reads documents back through the schema', async () => {
    const { store, collection, reported } = await widgets();
    await collection.put('a', { name: 'first', size: 3 });
    await store.put('widgets', 'b', { name: 'second' });
    expect(await collection.get('a')).toEqual({ name: 'first', size: 3 });
    expect(await collection.get('b')).toEqual({ name: 'second', size: 1 });
    expect(await collection.get('missing')).toBeUndefined();
    expect(reported).toEqual([]);
    await store.close();
  });

  it('counts a document of another version as absent, reports it, and still lists its id', async () => {
    const { store, collection, reported } = await widgets();
    await collection.put('good', { name: 'kept', size: 2 });
    await store.put('widgets', 'old', { title: 'written by another version' });
    expect(await collection.get('old')).toBeUndefined();
    expect(await collection.list()).toEqual([{ id: 'good', value: { name: 'kept', size: 2 } }]);
    expect((await collection.ids()).sort()).toEqual(['good', 'old']);
    expect(reported).toEqual([
      { collection: 'widgets', id: 'old', issue: expect.stringMatching(/string/) },
      { collection: 'widgets', id: 'old', issue: expect.stringMatching(/string/) },
    ]);
    expect(await collection.delete('old')).toBe(true);
    expect(await collection.ids()).toEqual(['good']);
    await store.close();
  });
});
