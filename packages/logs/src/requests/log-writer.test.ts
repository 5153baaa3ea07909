import { describe, expect, it, vi } from 'vitest';
import { largestRoutingDecision, logRecord } from '../../../testkit/src/log-store-fixtures.ts';
import type { LogRecord, LogRecordInput } from './log-record.ts';
import { type LogSink, LogWriter } from './log-writer.ts';

/** The machine may be busy: conditions get 5 s to come true. */
const eventually = <T>(check: () => T | Promise<T>) => vi.waitFor(check, { timeout: 5_000, interval: 20 });

/** A sink that records its batches, fails when told to, and can be held to keep a write in flight. */
function fakeSink() {
  const batches: string[][] = [];
  let failures = 0;
  let active = 0;
  let mostActive = 0;
  let gate: Promise<void> = Promise.resolve();
  let release = () => {};
  const sink: LogSink = {
    async insert(records: readonly LogRecord[]) {
      active += 1;
      mostActive = Math.max(mostActive, active);
      try {
        await gate;
        if (failures > 0) {
          failures -= 1;
          throw new Error('database unavailable');
        }
        batches.push(records.map((record) => record.id));
      } finally {
        active -= 1;
      }
    },
  };
  return {
    sink,
    batches,
    written: () => batches.flat(),
    failNext: (count: number) => {
      failures = count;
    },
    hold: () => {
      gate = new Promise((resolve) => {
        release = resolve;
      });
    },
    release: () => release(),
    mostActive: () => mostActive,
  };
}

const records = (count: number, prefix = 'r') =>
  Array.from({ length: count }, (_, index) => logRecord({ id: `${prefix}${index}` }));

describe('LogWriter', () => {
  it('takes a record synchronously and writes a full batch on a later turn, never in the caller’s stack', async () => {
    const fake = fakeSink();
    const writer = new LogWriter({ sink: fake.sink, batchSize: 3, flushIntervalMs: 60_000 });
    for (const record of records(3)) expect(writer.enqueue(record)).toBe(true);
    expect(fake.batches).toEqual([]);
    expect(writer.buffered).toBe(3);
    await eventually(() => expect(fake.batches).toEqual([['r0', 'r1', 'r2']]));
    expect(writer.written).toBe(3);
    await writer.close();
  });

  it('writes a partial batch within the flush interval', async () => {
    const fake = fakeSink();
    const writer = new LogWriter({ sink: fake.sink, batchSize: 100, flushIntervalMs: 20 });
    writer.enqueue(logRecord({ id: 'alone' }));
    await eventually(() => expect(fake.batches).toEqual([['alone']]));
    await writer.close();
  });

  it('drops and counts what does not fit the buffer while a write is in flight, one write at a time', async () => {
    const fake = fakeSink();
    const drops: Array<[string, number]> = [];
    const writer = new LogWriter({
      sink: fake.sink,
      batchSize: 2,
      maxBuffered: 4,
      flushIntervalMs: 5,
      onDrop: (reason, count) => drops.push([reason, count]),
    });
    fake.hold();
    for (const record of records(2, 'first')) writer.enqueue(record);
    await eventually(() => expect(writer.buffered).toBe(0));
    const accepted = records(6).map((record) => writer.enqueue(record));
    expect(accepted).toEqual([true, true, true, true, false, false]);
    expect(writer.dropped).toEqual({ buffer_full: 2, invalid: 0, write_failed: 0, closed: 0 });
    expect(drops).toEqual([
      ['buffer_full', 1],
      ['buffer_full', 1],
    ]);
    fake.release();
    await writer.close();
    expect(fake.written()).toEqual(['first0', 'first1', 'r0', 'r1', 'r2', 'r3']);
    expect(fake.mostActive()).toBe(1);
  });

  it('refuses an invalid record without throwing (even when its callbacks do), telling onError which field', () => {
    const errors: unknown[] = [];
    const writer = new LogWriter({ sink: fakeSink().sink, onError: (error) => errors.push(error) });
    expect(writer.enqueue({ ...logRecord({ id: 'bad' }), latency_ms: Number.NaN })).toBe(false);
    expect(writer.enqueue(null as unknown as LogRecordInput)).toBe(false);
    expect(writer.dropped.invalid).toBe(2);
    const throwing = new LogWriter({
      sink: fakeSink().sink,
      onError: () => {
        throw new Error('a broken callback');
      },
      onDrop: () => {
        throw new Error('another one');
      },
    });
    expect(throwing.enqueue(null as unknown as LogRecordInput)).toBe(false);
    void throwing.close();
    expect(String(errors[0])).toMatch(/log record refused: latency_ms: /);
    return writer.close();
  });

  it('tries a failed batch again, in order, and drops it (counted) after maxAttempts', async () => {
    const fake = fakeSink();
    const errors: unknown[] = [];
    const writer = new LogWriter({
      sink: fake.sink,
      batchSize: 2,
      flushIntervalMs: 10,
      maxAttempts: 3,
      onError: (error) => errors.push(error),
    });
    fake.failNext(2);
    for (const record of records(2)) writer.enqueue(record);
    await eventually(() => expect(fake.batches).toEqual([['r0', 'r1']]));
    expect(errors).toHaveLength(2);
    fake.failNext(3);
    for (const record of records(3, 'lost')) writer.enqueue(record);
    await writer.flush();
    expect(writer.dropped.write_failed).toBe(2);
    expect(fake.written()).toEqual(['r0', 'r1', 'lost2']);
    await writer.close();
  });

  it('loses nothing while its sink is down for many intervals, then catches up in order (a Redis outage)', async () => {
    // Issue 42: three failed writes used to drop a batch, so a 10-second Redis outage lost 1,888 of 4,585 records.
    const fake = fakeSink();
    const writer = new LogWriter({ sink: fake.sink, batchSize: 2, flushIntervalMs: 10, onError: () => {} });
    fake.failNext(20);
    for (const record of records(5)) writer.enqueue(record);
    await eventually(() => expect(fake.written()).toEqual(['r0', 'r1', 'r2', 'r3', 'r4']));
    expect(writer.dropped.write_failed).toBe(0);
    await writer.close();
  });

  it('drops a batch (counted) once it has failed for retryForMs, and the next one is written', async () => {
    const fake = fakeSink();
    const clock = { now: 0 };
    const writer = new LogWriter({
      sink: fake.sink,
      batchSize: 2,
      flushIntervalMs: 10,
      retryForMs: 1_000,
      now: () => clock.now,
      onError: () => {},
    });
    fake.failNext(1_000_000);
    for (const record of records(2, 'old')) writer.enqueue(record);
    await eventually(() => expect(writer.buffered).toBe(0));
    clock.now = 1_000;
    await eventually(() => expect(writer.dropped.write_failed).toBe(2));
    fake.failNext(0);
    for (const record of records(2, 'new')) writer.enqueue(record);
    await eventually(() => expect(fake.written()).toEqual(['new0', 'new1']));
    await writer.close();
  });

  it('writes everything on close, then drops (counted) what comes after', async () => {
    const fake = fakeSink();
    const writer = new LogWriter({ sink: fake.sink, batchSize: 4, flushIntervalMs: 60_000 });
    for (const record of records(10)) writer.enqueue(record);
    await writer.close();
    expect(fake.batches.map((batch) => batch.length)).toEqual([4, 4, 2]);
    expect(writer.enqueue(logRecord({ id: 'late' }))).toBe(false);
    expect(writer.dropped.closed).toBe(1);
  });
  it('keeps a routing decision within the bounds as it is, and copies one it must cut, leaving it unchanged', async () => {
    const kept: LogRecord[] = [];
    const writer = new LogWriter({ sink: { insert: async (records) => void kept.push(...records) } });
    const within = largestRoutingDecision();
    writer.enqueueRecord({ ...logRecord({ id: 'within' }), routing: within });
    // At every bound but one infinite score, which JSON cannot carry: the record takes a copy without it.
    const infinite = largestRoutingDecision();
    infinite.candidates[1]!.score = Number.POSITIVE_INFINITY;
    writer.enqueueRecord({ ...logRecord({ id: 'infinite' }), routing: infinite });
    await writer.close();
    expect(kept.map((record) => record.id)).toEqual(['within', 'infinite']);
    expect(kept[0]!.routing).toBe(within);
    expect(kept[1]!.routing).not.toBe(infinite);
    expect(kept[1]!.routing?.candidates[1]).not.toHaveProperty('score');
    expect(kept[1]!.routing?.candidates[0]).toEqual(infinite.candidates[0]);
    expect(infinite.candidates[1]!.score).toBe(Number.POSITIVE_INFINITY);
  });
});
