import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { logRecord, routingDecision } from '../../../testkit/src/log-store-fixtures.ts';
import { type DroppedRow, DroppedTally } from '../requests/dropped-counts.ts';
import type { LogRecord } from '../requests/log-record.ts';
import { LogWriter } from '../requests/log-writer.ts';
import { SqliteLogStore } from '../sqlite/sqlite-log-store.ts';
import type { RedisLogConsumerOptions } from './redis-log-consumer.ts';
import { logStreamKey, RedisLogConsumer, RedisLogProducer } from './redis-log-queue.ts';

/** The machine may be busy: conditions get 5 s to come true. */
const eventually = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 5_000, interval: 20 });

const url = process.env['REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const runPrefix = `gw-test:${process.pid}:${randomBytes(4).toString('hex')}:`;
const admin = new Redis(url);
const connections: Redis[] = [];
const consumers: RedisLogConsumer[] = [];

const connect = () => {
  const redis = new Redis(url);
  connections.push(redis);
  return redis;
};
let cases = 0;
const freshPrefix = () => `${runPrefix}${++cases}:`;
const records = (count: number, prefix = 'r') =>
  Array.from({ length: count }, (_, index) => logRecord({ id: `${prefix}${index}` }));

/** A sink that keeps records by id, and fails while told to. */
function memorySink() {
  const stored = new Map<string, LogRecord>();
  const dropped: DroppedRow[] = [];
  let failing = false;
  return {
    stored,
    dropped,
    async insertDropped(rows: readonly DroppedRow[]) {
      if (failing) throw new Error('database unavailable');
      dropped.push(...rows);
    },
    setFailing: (value: boolean) => {
      failing = value;
    },
    async insert(batch: readonly LogRecord[]) {
      if (failing) throw new Error('database unavailable');
      for (const record of batch) stored.set(record.id, record);
    },
  };
}

/** Entries delivered to the group's workers and not acknowledged yet. */
async function pendingCount(key: string): Promise<unknown> {
  const [count] = (await admin.xpending(key, 'log-writers')) as [number, ...unknown[]];
  return count;
}

function startConsumer(options: Omit<RedisLogConsumerOptions, 'redis'>) {
  const consumer = RedisLogConsumer.start({
    redis: connect(),
    blockMs: 100,
    retryDelayMs: 50,
    onError: () => {},
    ...options,
  });
  consumers.push(consumer);
  return consumer;
}

afterEach(async () => {
  await Promise.all(consumers.splice(0).map((consumer) => consumer.close()));
});

describe('RedisLogProducer and RedisLogConsumer', () => {
  it('carry a writer’s records through the stream into a store, acknowledging them', async () => {
    const prefix = freshPrefix();
    const dataDir = await mkdtemp(path.join(tmpdir(), 'gw-log-queue-'));
    const store = await SqliteLogStore.open({ dataDir });
    const writer = new LogWriter({ sink: new RedisLogProducer({ redis: connect(), prefix }), batchSize: 10 });
    const sent = records(25);
    sent.push(
      logRecord({
        id: 'full',
        request_content: 'hello 🚀',
        cost: 0.5,
        cache_outcome: 'hit',
        routing: routingDecision(),
      }),
    );
    for (const record of sent) writer.enqueue(record);
    await writer.close();
    const consumer = startConsumer({ prefix, store });
    await eventually(async () => expect((await store.query({ limit: 1000 })).records).toHaveLength(26));
    expect(await store.get('full')).toEqual(sent.at(-1));
    expect(consumer.counts).toEqual({ inserted: 26, invalid: 0, lostEntries: 0, claimedEntries: 0 });
    await eventually(async () => expect(await pendingCount(logStreamKey(prefix))).toBe(0));
    await store.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('keeps entries pending while the store fails, and stores them once it recovers', async () => {
    const prefix = freshPrefix();
    const sink = memorySink();
    sink.setFailing(true);
    await new RedisLogProducer({ redis: connect(), prefix }).insert(records(5));
    startConsumer({ prefix, store: sink });
    await eventually(async () => expect(await pendingCount(logStreamKey(prefix))).toBe(1));
    sink.setFailing(false);
    await eventually(() => expect(sink.stored.size).toBe(5));
  });

  it('takes over what a dead worker held, and lets the silent worker go', async () => {
    const prefix = freshPrefix();
    const dead = memorySink();
    dead.setFailing(true);
    await new RedisLogProducer({ redis: connect(), prefix }).insert(records(7));
    const first = startConsumer({ prefix, store: dead, consumer: 'dead-worker' });
    await eventually(async () => expect(await pendingCount(logStreamKey(prefix))).toBe(1));
    await first.close();
    const alive = memorySink();
    const second = startConsumer({ prefix, store: alive, consumer: 'alive-worker', claimIdleMs: 100 });
    await eventually(() => expect(alive.stored.size).toBe(7));
    expect(second.counts).toMatchObject({ inserted: 7, claimedEntries: 1 });
    await eventually(async () => {
      const names = (await admin.xinfo('CONSUMERS', logStreamKey(prefix), 'log-writers')) as string[][];
      expect(names.map((fields) => fields[1])).toEqual(['alive-worker']);
    });
  });

  it('acknowledges and counts entries that hold no record, and entries trimmed before anyone stored them', async () => {
    const prefix = freshPrefix();
    const key = logStreamKey(prefix);
    await admin.xadd(key, '*', 'records', '{not json');
    await admin.xadd(
      key,
      '*',
      'records',
      JSON.stringify([{ id: 'no-time' }, logRecord({ id: 'beside-it' })]),
    );
    await admin.xadd(key, '*', 'other', 'field');
    await admin.xadd(key, '*', 'records', '{"id":"not-a-list"}');
    await new RedisLogProducer({ redis: connect(), prefix }).insert(records(1));
    const errors: unknown[] = [];
    const sink = memorySink();
    const consumer = startConsumer({ prefix, store: sink, onError: (error) => errors.push(error) });
    await eventually(() => expect(consumer.counts).toMatchObject({ inserted: 2, invalid: 4 }));
    expect([...sink.stored.keys()].sort()).toEqual(['beside-it', 'r0']);
    expect(errors.map(String)).toEqual([
      expect.stringMatching(/is not JSON/),
      expect.stringMatching(/record 0: time: /),
      expect.stringMatching(/has no records field/),
      expect.stringMatching(/does not hold a list of records/),
    ]);
    await consumer.close();

    const stuck = memorySink();
    stuck.setFailing(true);
    await new RedisLogProducer({ redis: connect(), prefix, recordsPerEntry: 2 }).insert(
      records(3, 'trimmed'),
    );
    const holder = startConsumer({ prefix, store: stuck, consumer: 'holder' });
    await eventually(async () => expect(await pendingCount(key)).toBe(2));
    await holder.close();
    await admin.xtrim(key, 'MAXLEN', 0);
    // Lost entries are counted where an operator looks: the store's dropped counts and the metric.
    const tally = new DroppedTally('worker-1');
    const told: Array<[string, number]> = [];
    const claimer = startConsumer({
      prefix,
      store: sink,
      consumer: 'claimer',
      claimIdleMs: 50,
      tally,
      onDrop: (reason, count) => told.push([reason, count]),
    });
    await eventually(() => expect(claimer.counts.lostEntries).toBe(2));
    expect(await pendingCount(key)).toBe(0);
    expect(told).toEqual([['stream_lost', 2]]);
    await eventually(() =>
      expect(sink.dropped).toContainEqual(
        expect.objectContaining({ reason: 'log_stream_lost', count: 2, source: 'worker-1' }),
      ),
    );
  });

  it('splits a large batch into entries, in order', async () => {
    const prefix = freshPrefix();
    await new RedisLogProducer({ redis: connect(), prefix, recordsPerEntry: 4 }).insert(records(10));
    const entries = (await admin.xrange(logStreamKey(prefix), '-', '+')) as Array<[string, string[]]>;
    const batches = entries.map(([, fields]) =>
      (JSON.parse(fields[1]!) as LogRecord[]).map((record) => record.id),
    );
    expect(batches).toEqual([
      ['r0', 'r1', 'r2', 'r3'],
      ['r4', 'r5', 'r6', 'r7'],
      ['r8', 'r9'],
    ]);
  });

  it('bounds the stream to about maxRecords records (MAXLEN ~ in entries of the batch’s size)', async () => {
    const prefix = freshPrefix();
    const producer = new RedisLogProducer({ redis: connect(), prefix, maxRecords: 100, recordsPerEntry: 10 });
    for (let batch = 0; batch < 10; batch += 1) await producer.insert(records(1_000, `b${batch}-`));
    // `~` trims whole nodes of the stream (100 entries each), so up to a node more than asked stays.
    const length = await admin.xlen(logStreamKey(prefix));
    expect(length).toBeGreaterThanOrEqual(10);
    expect(length).toBeLessThanOrEqual(10 + 100);
  });

  it('fails a batch when Redis does, so the writer retries it and counts it dropped', async () => {
    const unreachable = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    unreachable.on('error', () => {});
    const writer = new LogWriter({
      sink: new RedisLogProducer({ redis: unreachable, prefix: freshPrefix() }),
      maxAttempts: 2,
      flushIntervalMs: 10,
      onError: () => {},
    });
    for (const record of records(3)) writer.enqueue(record);
    await writer.close();
    expect(writer.dropped).toMatchObject({ write_failed: 3 });
    unreachable.disconnect();
  });
});

afterAll(async () => {
  let cursor = '0';
  do {
    const [next, keys] = await admin.scan(cursor, 'MATCH', `${runPrefix}*`, 'COUNT', 500);
    if (keys.length > 0) await admin.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  await Promise.all(connections.map((redis) => redis.quit().catch(() => {})));
  await admin.quit();
});
