import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { runLogStoreContract } from '../../../testkit/src/log-store-contract.ts';
import {
  logRecord,
  routingDecision,
  T0,
  TEXT_CASES,
  TEXT_RECORDS,
} from '../../../testkit/src/log-store-fixtures.ts';
import { LOG_RECORD_FIELDS, type LogRecord } from '../requests/log-record.ts';
import { columnsOf } from './sqlite-log-database.ts';
import { SQLITE_LOG_FILE_NAME, SqliteLogStore } from './sqlite-log-store.ts';

const root = await mkdtemp(path.join(tmpdir(), 'gw-sqlite-logs-'));
const freshDir = () => mkdtemp(path.join(root, 'store-'));

runLogStoreContract({
  name: 'SqliteLogStore',
  create: async () => SqliteLogStore.open({ dataDir: await freshDir() }),
});

describe('SqliteLogStore', () => {
  it('keeps its records in one file of the data directory, across reopening', async () => {
    const dataDir = path.join(await freshDir(), 'nested', 'data');
    const first = await SqliteLogStore.open({ dataDir });
    await first.insert([logRecord({ id: 'kept', request_content: 'searchable text' })]);
    await first.close();
    expect((await stat(path.join(dataDir, SQLITE_LOG_FILE_NAME))).isFile()).toBe(true);
    const second = await SqliteLogStore.open({ dataDir });
    expect((await second.get('kept'))?.request_content).toBe('searchable text');
    expect((await second.query({ q: 'SEARCHABLE' })).records.map((record) => record.id)).toEqual(['kept']);
    await second.close();
    await second.close();
  });

  it('writes a batch of many rows whole, in order, each field in its column, a repeated id once', async () => {
    const store = await SqliteLogStore.open({ dataDir: await freshDir() });
    // 70 records: two statements of many rows and six of one; the repeat of an id is skipped, not an error.
    const records = Array.from({ length: 70 }, (_, index) =>
      logRecord({
        id: `many-${index}`,
        time: T0 + index,
        status: 200 + index,
        content_truncated: index % 2 === 0,
      }),
    );
    await store.insert([...records, logRecord({ id: 'many-3', status: 599 })]);
    const page = await store.query({ limit: 100 });
    expect(page.records.map((record) => [record.id, record.status, record.content_truncated]).sort()).toEqual(
      records.map((record) => [record.id, record.status, record.content_truncated]).sort(),
    );
    await store.close();
  });

  it('lays a record out in the columns’ order, field by field', () => {
    // Each field holds its own name: the layout must give back LOG_RECORD_FIELDS, in order (the fields
    // stored converted aside: cost_breakdown, attempts and routing as JSON text, content_truncated as 0 or 1).
    const named = Object.fromEntries(LOG_RECORD_FIELDS.map((field) => [field, field]));
    const record = {
      ...named,
      cost_breakdown: { input: 1 },
      attempts: [{ provider: 'attempts' }],
      routing: { strategy: 'routing' },
      content_truncated: true,
    } as unknown as LogRecord;
    const converted: Partial<Record<keyof LogRecord, unknown>> = {
      cost_breakdown: '{"input":1}',
      attempts: '[{"provider":"attempts"}]',
      routing: '{"strategy":"routing"}',
      content_truncated: 1,
    };
    expect(columnsOf(record)).toEqual(
      LOG_RECORD_FIELDS.map((field) => (field in converted ? converted[field] : field)),
    );
  });

  it('adds the columns a log file written by an older gw lacks, keeping its records', async () => {
    const dataDir = await freshDir();
    const old = new DatabaseSync(path.join(dataDir, SQLITE_LOG_FILE_NAME));
    // The table as the first release made it: no business_unit_id, no attempts.
    old.exec(`CREATE TABLE request_logs (
      "id" TEXT NOT NULL UNIQUE, "time" INTEGER NOT NULL, "surface" TEXT NOT NULL, "route" TEXT NOT NULL,
      "provider" TEXT, "model" TEXT, "requested_model" TEXT, "status" INTEGER NOT NULL, "error_type" TEXT,
      "latency_ms" REAL NOT NULL, "time_to_first_token_ms" REAL,
      "input_tokens" INTEGER NOT NULL, "output_tokens" INTEGER NOT NULL, "cached_tokens" INTEGER NOT NULL,
      "reasoning_tokens" INTEGER NOT NULL, "cost" REAL NOT NULL,
      "virtual_key_id" TEXT, "virtual_key_name" TEXT, "team_id" TEXT, "customer_id" TEXT, "user_id" TEXT,
      "selected_key_id" TEXT, "fallback_index" INTEGER, "cache_outcome" TEXT, "guardrail_outcome" TEXT,
      "request_content" TEXT, "response_content" TEXT, "content_truncated" INTEGER NOT NULL, "trace_id" TEXT)`);
    old.exec(`INSERT INTO request_logs VALUES ('old', ${T0}, 'openai', '/v1/chat/completions', NULL, NULL, NULL,
      200, NULL, 5, NULL, 0, 0, 0, 0, 0, NULL, NULL, 'team-1', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 0, NULL)`);
    old.close();
    const store = await SqliteLogStore.open({ dataDir });
    const kept = await store.get('old');
    expect(kept).toMatchObject({
      team_id: 'team-1',
      business_unit_id: null,
      attempts: null,
      cost_breakdown: null,
    });
    expect(kept?.routing).toBeUndefined();
    const failed = logRecord({
      id: 'new',
      cost: 0.5,
      cost_breakdown: { input: 0.1, cached_input: 0.1, cache_write: 0.1, output: 0.2, reasoning: 0.1 },
      business_unit_id: 'unit-1',
      attempts: [
        { provider: 'openai', model: 'gpt-4o', status: 500, error_type: 'upstream_error', message: 'down' },
      ],
      routing: routingDecision(),
    });
    await store.insert([failed]);
    expect(await store.get('new')).toEqual(failed);
    expect((await store.query({ routing_rule: 'rule-cheap' })).records.map((record) => record.id)).toEqual([
      'new',
    ]);
    await store.close();
  });

  it('keeps the audio part of a cost breakdown (a JSON column: no migration), and its absence', async () => {
    const store = await SqliteLogStore.open({ dataDir: await freshDir() });
    const spoken = logRecord({
      id: 'spoken',
      cost: 0.05202,
      cost_breakdown: {
        input: 0.00006,
        cached_input: 0,
        cache_write: 0,
        output: 0.00012,
        reasoning: 0,
        audio: 0.05184,
      },
    });
    const written = logRecord({
      id: 'written',
      cost_breakdown: { input: 0.1, cached_input: 0, cache_write: 0, output: 0.2, reasoning: 0 },
    });
    await store.insert([spoken, written]);
    expect(await store.get('spoken')).toEqual(spoken);
    expect((await store.get('written'))?.cost_breakdown).not.toHaveProperty('audio');
    await store.close();
  });

  it('answers text search the same through an FTS5 trigram index, built over what is stored', async () => {
    const dataDir = await freshDir();
    const plain = await SqliteLogStore.open({ dataDir });
    await plain.insert(TEXT_RECORDS.slice(0, 2));
    await plain.close();
    const indexed = await SqliteLogStore.open({ dataDir, textSearchIndex: true });
    await indexed.insert(TEXT_RECORDS.slice(2));
    for (const [query, ids] of TEXT_CASES) {
      const found = (await indexed.query({ ...query, limit: 1000 })).records
        .map((record) => record.id)
        .sort();
      expect({ query, found }).toEqual({ query, found: ids });
    }
    expect(await indexed.deleteOlderThan(T0 + 1)).toBe(TEXT_RECORDS.length);
    expect((await indexed.query({ q: 'eiffel' })).records).toEqual([]);
    await indexed.close();
  });

  it('keeps the gateway’s thread free: the database runs on a thread of its own', async () => {
    const store = await SqliteLogStore.open({ dataDir: await freshDir() });
    const records = Array.from({ length: 5_000 }, (_, index) =>
      logRecord({ id: `r${index}`, request_content: 'x'.repeat(2_000) }),
    );
    let ticks = 0;
    const ticker = setInterval(() => {
      ticks += 1;
    }, 1);
    await store.insert(records);
    clearInterval(ticker);
    expect(ticks).toBeGreaterThan(0);
    await store.close();
    await expect(store.get('r0')).rejects.toThrow('closed');
  });

  it('rolls back a batch that fails part way, so no record of it is stored', async () => {
    const store = await SqliteLogStore.open({ dataDir: await freshDir() });
    const broken = { ...logRecord({ id: 'broken' }), status: null } as unknown as ReturnType<
      typeof logRecord
    >;
    await expect(store.insert([logRecord({ id: 'first' }), broken])).rejects.toThrow(/NOT NULL/);
    expect(await store.get('first')).toBeUndefined();
    await store.close();
  });
});

afterAll(() => rm(root, { recursive: true, force: true }));
