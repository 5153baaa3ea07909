import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { runLogStoreContract } from '../../../testkit/src/log-store-contract.ts';
import {
  logRecord,
  routingDecision,
  TEXT_CASES,
  TEXT_RECORDS,
} from '../../../testkit/src/log-store-fixtures.ts';
import { createTestDatabase } from '../../../testkit/src/postgres-database.ts';
import { PostgresLogStore } from './postgres-log-store.ts';

const database = await createTestDatabase();
const freshSchema = () => `logs_${randomBytes(4).toString('hex')}`;

runLogStoreContract({
  name: 'PostgresLogStore',
  create: () => PostgresLogStore.open({ url: database.url, schema: freshSchema() }),
});

describe('PostgresLogStore', () => {
  it('workers opening together create the schema once', async () => {
    const schema = freshSchema();
    const stores = await Promise.all(
      Array.from({ length: 4 }, () => PostgresLogStore.open({ url: database.url, schema })),
    );
    expect(stores.map((store) => store.textSearch)).toEqual(['scan', 'scan', 'scan', 'scan']);
    await stores[0]!.insert([logRecord({ id: 'one' })]);
    expect((await stores[3]!.get('one'))?.id).toBe('one');
    await Promise.all(stores.map((store) => store.close()));
  });

  it('answers text search the same through pg_trgm indexes, when asked for them', async () => {
    const schema = freshSchema();
    const store = await PostgresLogStore.open({ url: database.url, schema, textSearchIndex: true });
    expect(store.textSearch).toBe('trigram');
    await store.insert(TEXT_RECORDS);
    for (const [query, ids] of TEXT_CASES) {
      const found = (await store.query({ ...query, limit: 1000 })).records.map((record) => record.id).sort();
      expect({ query, found }).toEqual({ query, found: ids });
    }
    await store.close();
    const reopened = await PostgresLogStore.open({ url: database.url, schema });
    expect(reopened.textSearch).toBe('trigram');
    await reopened.close();
  });

  it('adds the columns a table made by an older gw lacks, keeping its records', async () => {
    const schema = freshSchema();
    const first = await PostgresLogStore.open({ url: database.url, schema });
    await first.insert([logRecord({ id: 'old', team_id: 'team-1' })]);
    await first.close();
    // As the first release made it: without the columns added since.
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    await client.query(
      `ALTER TABLE "${schema}".request_logs DROP COLUMN "business_unit_id", DROP COLUMN "attempts",` +
        ' DROP COLUMN "routing", DROP COLUMN "cost_breakdown"',
    );
    await client.end();
    const store = await PostgresLogStore.open({ url: database.url, schema });
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

  it('stores content holding NUL (refused by PostgreSQL text) with U+FFFD in its place', async () => {
    const store = await PostgresLogStore.open({ url: database.url, schema: freshSchema() });
    await store.insert([logRecord({ id: 'nul', response_content: 'before\u0000after' })]);
    expect((await store.get('nul'))?.response_content).toBe('before\uFFFDafter');
    expect((await store.query({ q: 'AFTER' })).records.map((record) => record.id)).toEqual(['nul']);
    await store.close();
  });

  it('fails to open with the server’s reason when the database is unreachable', async () => {
    const url = new URL(database.url);
    url.port = '1';
    await expect(PostgresLogStore.open({ url: url.toString() })).rejects.toThrow(/ECONNREFUSED/);
  });
});

afterAll(() => database.drop());
