import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { runStoreContract } from '../../../testkit/src/index.ts';
import { MemoryStore, STORE_FILE_NAME } from './memory-store.ts';

const dataDir = await mkdtemp(path.join(tmpdir(), 'gw-memory-store-'));

runStoreContract({
  name: 'MemoryStore',
  create: () => MemoryStore.open({ dataDir }),
  skip: {
    'a message published by one store reaches a subscriber of another':
      'pub/sub is in-process: embedded mode runs one gateway process',
  },
});

describe('MemoryStore', () => {
  const freshDir = () => mkdtemp(path.join(tmpdir(), 'gw-memory-store-'));

  it('writes its file with mode 0600, since documents hold secrets', async () => {
    const directory = await freshDir();
    const store = await MemoryStore.open({ dataDir: directory });
    await store.put('keys', 'a', { value: 'sk-secret' });
    await store.close();
    expect((await stat(path.join(directory, STORE_FILE_NAME))).mode & 0o777).toBe(0o600);
  });

  it('writes a change within the debounce delay, without waiting for close', async () => {
    const directory = await freshDir();
    const store = await MemoryStore.open({ dataDir: directory });
    await store.put('keys', 'a', 1);
    await vi.waitFor(async () => {
      const file = JSON.parse(await readFile(path.join(directory, STORE_FILE_NAME), 'utf8'));
      expect(file.documents).toEqual([{ collection: 'keys', id: 'a', value: 1 }]);
    }, 2_000);
    await store.close();
  });

  it('refuses to open a corrupt file, naming it, and leaves it untouched', async () => {
    const directory = await freshDir();
    const filePath = path.join(directory, STORE_FILE_NAME);
    await writeFile(filePath, '{"version":1,"documents":[');
    await expect(MemoryStore.open({ dataDir: directory })).rejects.toThrow(filePath);
    await writeFile(filePath, '{"version":2}');
    await expect(MemoryStore.open({ dataDir: directory })).rejects.toThrow(
      `The gw store file ${filePath} is corrupt`,
    );
    expect(await readFile(filePath, 'utf8')).toBe('{"version":2}');
  });

  it('keeps nothing on disk without a data directory', async () => {
    const store = await MemoryStore.open();
    await store.put('keys', 'a', 1);
    expect(await store.get('keys', 'a')).toBe(1);
    await store.close();
    await expect(store.get('keys', 'a')).rejects.toThrow('closed');
  });
});

afterAll(() => rm(dataDir, { recursive: true, force: true }));
