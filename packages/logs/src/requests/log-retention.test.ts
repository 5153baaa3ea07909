// Retention: the timer deletes records older than the configured days from a real SQLite log, and days = 0
// keeps everything.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../../testkit/src/wait-for.ts';
import { SqliteLogStore } from '../sqlite/sqlite-log-store.ts';
import { logRecordSchema } from './log-record.ts';
import { startLogRetention } from './log-retention.ts';

const DAY = 24 * 3_600_000;
const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('startLogRetention', () => {
  it('deletes records older than the retention on its timer, reading the setting at each run', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'gw-retention-'));
    const store = await SqliteLogStore.open({ dataDir });
    cleanups.push(
      () => rm(dataDir, { recursive: true, force: true }),
      () => store.close(),
    );
    const base = { surface: 'openai', route: '/v1/chat/completions', status: 200, latency_ms: 1 };
    const now = Date.now();
    await store.insert(
      [
        { id: 'old', time: now - 40 * DAY },
        { id: 'week', time: now - 7 * DAY },
        { id: 'new', time: now },
      ].map((record) => logRecordSchema.parse({ ...base, ...record })),
    );
    await store.insertDropped([
      { bucket_start: now - 40 * DAY, reason: 'connection_cap', source: 's', count: 1 },
    ]);
    let days = 0;
    const deleted: number[] = [];
    const retention = startLogRetention({
      store,
      retentionDays: () => days,
      intervalMs: 20,
      onDeleted: (count) => deleted.push(count),
    });
    cleanups.push(() => retention.stop());
    expect(await retention.run()).toBe(0);
    days = 30;
    await waitFor(() => deleted.length > 0, { timeoutMs: 5_000, what: 'a retention run' });
    expect(deleted[0]).toBe(1);
    expect(await store.get('old')).toBeUndefined();
    expect(await store.get('week')).toBeDefined();
    expect((await store.dropped({})).totals).toEqual({});
    // The timer stopped, a run by hand: nothing of the timer's runs races it.
    await retention.stop();
    days = 1;
    expect(await retention.run()).toBe(1);
    expect((await store.query({})).records.map((record) => record.id)).toEqual(['new']);
  });
});
