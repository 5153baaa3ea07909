import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { auditEvent, runAuditStoreContract } from '../../testkit/src/audit-store-contract.ts';
import { createTestDatabase } from '../../testkit/src/postgres-database.ts';
import { PostgresAuditStore } from './postgres-audit-store.ts';
import { PostgresLogStore } from './postgres-log-store.ts';

const database = await createTestDatabase();
const freshSchema = () => `audit_${randomBytes(4).toString('hex')}`;

/** SQL on the schema from a connection of its own, as an operator with database access would. */
function sqlOn(schema: string) {
  return async (statement: string) => {
    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query(`SET search_path TO ${schema}`);
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
}

runAuditStoreContract({
  name: 'PostgresAuditStore',
  create: async () => {
    const schema = freshSchema();
    return {
      store: await PostgresAuditStore.open({ url: database.url, schema }),
      sql: sqlOn(schema),
      another: () => PostgresAuditStore.open({ url: database.url, schema }),
    };
  },
});

describe('PostgresAuditStore', () => {
  it('admin replicas opening and appending together make one chain in the request log database', async () => {
    const schema = freshSchema();
    const logs = await PostgresLogStore.open({ url: database.url, schema });
    // Four replicas, each with a pool of two: 200 appends at once, interleaved across processes' pools.
    const replicas = await Promise.all(
      Array.from({ length: 4 }, () => PostgresAuditStore.open({ url: database.url, schema })),
    );
    const records = await Promise.all(
      Array.from({ length: 200 }, (_, index) =>
        replicas[index % 4]!.append(auditEvent({ request_id: `replica-${index % 4}-${index}` })),
      ),
    );
    expect(new Set(records.map((record) => record.seq)).size).toBe(200);
    expect(Math.max(...records.map((record) => record.seq))).toBe(200);
    const verified = await replicas[3]!.verify();
    expect(verified).toEqual({
      ok: true,
      records: 200,
      head: records.find((record) => record.seq === 200)!.hash,
    });
    await Promise.all(replicas.map((store) => store.close()));
    await logs.close();
  });

  it('opens read-only for the verify command: creates nothing, and names the table it does not find', async () => {
    const schema = freshSchema();
    await expect(PostgresAuditStore.open({ url: database.url, schema, readOnly: true })).rejects.toThrow(
      `there is no table "${schema}".audit_log in this database`,
    );
    const writer = await PostgresAuditStore.open({ url: database.url, schema });
    await writer.append(auditEvent());
    const reader = await PostgresAuditStore.open({ url: database.url, schema, readOnly: true });
    expect(await reader.verify()).toMatchObject({ ok: true, records: 1 });
    await Promise.all([writer.close(), reader.close()]);
  });

  it('fails to open with the server’s reason when the database is unreachable', async () => {
    const url = new URL(database.url);
    url.port = '1';
    await expect(PostgresAuditStore.open({ url: url.toString() })).rejects.toThrow(/ECONNREFUSED/);
  });
});

afterAll(() => database.drop());
