// Dropped counts: a process's tally per minute and reason, written by the writer with its batches and stored so
// that a repeated write changes nothing; and the writer's typed path the ingress uses.
import { describe, expect, it } from 'vitest';
import { DROPPED_BUCKET_MS, type DroppedRow, DroppedTally } from './dropped-counts.ts';
import { type LogRecord, logRecordSchema } from './log-record.ts';
import { LogWriter } from './log-writer.ts';

const MINUTE = DROPPED_BUCKET_MS;
const T0 = Date.UTC(2025, 0, 1);

describe('DroppedTally', () => {
  it('counts per minute and reason, and offers only rows that changed since they were stored', () => {
    const tally = new DroppedTally('host:1:a');
    tally.add('provider_queue_full', 1, T0 + 5);
    tally.add('provider_queue_full', 2, T0 + 59_999);
    tally.add('connection_cap', 1, T0 + MINUTE);
    const rows = tally.pending();
    expect(rows).toEqual([
      { bucket_start: T0, reason: 'provider_queue_full', source: 'host:1:a', count: 3 },
      { bucket_start: T0 + MINUTE, reason: 'connection_cap', source: 'host:1:a', count: 1 },
    ]);
    tally.written(rows, T0 + MINUTE + 1);
    expect(tally.pending()).toEqual([]);
    // The current minute stays (its total grows); a later count offers it again with its new total.
    tally.add('connection_cap', 1, T0 + MINUTE + 2);
    expect(tally.pending()).toEqual([
      { bucket_start: T0 + MINUTE, reason: 'connection_cap', source: 'host:1:a', count: 2 },
    ]);
  });
});

describe('LogWriter with a tally', () => {
  it('writes the tally with its flush, and counts its own drops as log_<reason>', async () => {
    const written: DroppedRow[][] = [];
    const records: LogRecord[] = [];
    const tally = new DroppedTally('host:2:b');
    const writer = new LogWriter({
      sink: {
        async insert(batch) {
          records.push(...batch);
        },
        async insertDropped(rows) {
          written.push([...rows]);
        },
      },
      tally,
      maxBuffered: 1,
      flushIntervalMs: 10_000,
    });
    tally.add('trace_buffer_full', 4);
    const record = {
      id: 'a',
      time: 1,
      surface: 'openai',
      route: '/v1/chat/completions',
      status: 200,
      latency_ms: 1,
    };
    expect(writer.enqueue(record)).toBe(true);
    expect(writer.enqueue({ ...record, id: 'b' })).toBe(false);
    await writer.close();
    expect(records.map((stored) => stored.id)).toEqual(['a']);
    const totals = Object.fromEntries(written.flat().map((row) => [row.reason, row.count]));
    expect(totals).toEqual({ trace_buffer_full: 4, log_buffer_full: 1 });
  });
});

describe('LogWriter.enqueueRecord', () => {
  it('takes a whole typed record without a schema pass, cutting outside model names to their bound', async () => {
    const records: LogRecord[] = [];
    const writer = new LogWriter({
      sink: {
        async insert(batch) {
          records.push(...batch);
        },
      },
      contentMaxBytes: 4,
    });
    const record = logRecordSchema.parse({
      id: 'typed',
      time: 1,
      surface: 'openai',
      route: '/v1/chat/completions',
      status: 200,
      latency_ms: 1,
      request_content: 'héllo',
    });
    record.model = 'm'.repeat(600);
    expect(writer.enqueueRecord(record)).toBe(true);
    await writer.close();
    expect(records[0]).toMatchObject({ id: 'typed', request_content: 'hél', content_truncated: true });
    expect(records[0]?.model).toHaveLength(512);
    expect(logRecordSchema.safeParse(records[0]).success).toBe(true);
  });
});
