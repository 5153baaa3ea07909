import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { auditEvent, runAuditStoreContract } from '../../../testkit/src/audit-store-contract.ts';
import { startFreezableProxy } from '../../../testkit/src/freezable-proxy.ts';
import { createTestDatabase } from '../../../testkit/src/postgres-database.ts';
import { waitFor } from '../../../testkit/src/wait-for.ts';
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
  it("appends a queue's entries once each and in order, whichever replica drains what (audit.on_store_failure: queue)", async () => {
    const schema = freshSchema();
    const [one, two] = await Promise.all([
      PostgresAuditStore.open({ url: database.url, schema }),
      PostgresAuditStore.open({ url: database.url, schema }),
    ]);
    const entry = (id: string) => ({ id, event: auditEvent({ request_id: `queued-${id}` }) });
    // Two replicas read overlapping pages of the stream at once; a later page follows.
    const first = [entry('1700000000000-0'), entry('1700000000000-1'), entry('1700000000001-0')];
    const appended = await Promise.all([
      one!.appendQueued('q', first),
      two!.appendQueued('q', first.slice(0, 2)),
    ]);
    expect(appended[0] + appended[1]).toBe(3);
    // An entry that could not be decoded moves the cursor past it and is not a record; ids compare as numbers.
    expect(
      await two!.appendQueued('q', [
        ...first,
        { id: '1700000000001-1', event: undefined },
        entry('1700000000001-10'),
      ]),
    ).toBe(1);
    expect(await one!.appendQueued('q', [entry('1700000000001-2')])).toBe(0);
    const records = (await one!.query({ order: 'asc' })).records;
    expect(records.map((record) => [record.seq, record.request_id])).toEqual([
      [1, 'queued-1700000000000-0'],
      [2, 'queued-1700000000000-1'],
      [3, 'queued-1700000000001-0'],
      [4, 'queued-1700000000001-10'],
    ]);
    expect(await two!.verify()).toMatchObject({ ok: true, records: 4 });
    await one!.ping();
    await Promise.all([one!.close(), two!.close()]);
  });

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

  it('fails an append whose connection is cut while it holds it, and the process goes on', async () => {
    // pg reports a dead connection on the client too; one checked out of the pool, if nothing heard that, ended
    // the admin process (the connection cut by a PostgreSQL outage while an append held it, likelier on a busy
    // machine where an append takes longer).
    const schema = freshSchema();
    const real = new URL(database.url);
    const proxy = await startFreezableProxy({ host: real.hostname, port: Number(real.port || 5432) });
    const proxied = new URL(database.url);
    proxied.host = `127.0.0.1:${proxy.port}`;
    const store = await PostgresAuditStore.open({ url: proxied.toString(), schema });
    // Another session holds the chain's append lock: the append waits inside its transaction.
    const holder = new Client({ connectionString: database.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock(hashtext($1))', [
        `gw audit_log append "${schema}".audit_log`,
      ]);
      const append = store.append(auditEvent());
      const waiting = async () =>
        (
          await holder.query(
            "SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE application_name = 'gw-audit' AND wait_event_type = 'Lock'",
          )
        ).rows[0].waiting > 0;
      await waitFor(waiting, { what: 'the append waiting for the lock' });
      await proxy.close();
      await expect(append).rejects.toThrow(/Connection terminated|ECONNRESET/);
    } finally {
      await holder.end();
      await store.close().catch(() => {});
    }
  });

  it('fails to open with the server’s reason when the database is unreachable', async () => {
    const url = new URL(database.url);
    url.port = '1';
    await expect(PostgresAuditStore.open({ url: url.toString() })).rejects.toThrow(/ECONNREFUSED/);
  });
});

afterAll(() => database.drop());
