import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { auditEvent, runAuditStoreContract } from '../../../testkit/src/audit-store-contract.ts';
import { SQLITE_AUDIT_FILE_NAME, SqliteAuditDatabase, SqliteAuditStore } from './sqlite-audit-store.ts';
import { SQLITE_LOG_FILE_NAME, SqliteLogStore } from './sqlite-log-store.ts';

const root = await mkdtemp(path.join(tmpdir(), 'gw-sqlite-audit-'));
const freshDir = () => mkdtemp(path.join(root, 'store-'));

/** SQL on the file from a connection of its own, as an operator with the file would. */
function sqlOn(dataDir: string) {
  return async (statement: string) => {
    const database = new DatabaseSync(path.join(dataDir, SQLITE_AUDIT_FILE_NAME));
    try {
      database.exec('PRAGMA busy_timeout = 5000');
      database.exec(statement);
    } finally {
      database.close();
    }
  };
}

runAuditStoreContract({
  name: 'SqliteAuditStore',
  create: async () => {
    const dataDir = await freshDir();
    return {
      store: await SqliteAuditStore.open({ dataDir }),
      sql: sqlOn(dataDir),
      another: () => SqliteAuditStore.open({ dataDir }),
    };
  },
});

describe('SqliteAuditStore', () => {
  it('keeps its chain in a file of its own next to the request log, across reopening', async () => {
    const dataDir = path.join(await freshDir(), 'nested', 'data');
    const logs = await SqliteLogStore.open({ dataDir });
    const first = await SqliteAuditStore.open({ dataDir });
    const kept = await first.append(auditEvent());
    await first.close();
    await first.close();
    await expect(first.get(1)).rejects.toThrow('the audit log is closed');
    expect((await stat(path.join(dataDir, SQLITE_AUDIT_FILE_NAME))).isFile()).toBe(true);
    expect((await stat(path.join(dataDir, SQLITE_LOG_FILE_NAME))).isFile()).toBe(true);
    const second = await SqliteAuditStore.open({ dataDir });
    expect(await second.get(1)).toEqual(kept);
    expect((await second.append(auditEvent())).prev_hash).toBe(kept.hash);
    await second.close();
    await logs.close();
  });

  it('opens a file read-only for the verify command, which neither creates nor changes it', async () => {
    const dataDir = await freshDir();
    const store = await SqliteAuditStore.open({ dataDir });
    await store.append(auditEvent());
    await store.close();
    const file = path.join(dataDir, SQLITE_AUDIT_FILE_NAME);
    const database = SqliteAuditDatabase.open({ file, readOnly: true });
    expect(database.verify()).toMatchObject({ ok: true, records: 1 });
    expect(() =>
      database.append(
        { ...auditEvent(), role: 'admin', source: null, detail: null, before: null, after: null },
        Date.now(),
      ),
    ).toThrow(/readonly/);
    database.close();
    expect(() =>
      SqliteAuditDatabase.open({ file: path.join(dataDir, 'absent.sqlite'), readOnly: true }),
    ).toThrow(/unable to open/);
  });

  it('fails to open where the data directory cannot be made, naming it', async () => {
    const blocker = path.join(await freshDir(), 'a-file');
    await (await import('node:fs/promises')).writeFile(blocker, '');
    await expect(SqliteAuditStore.open({ dataDir: path.join(blocker, 'data') })).rejects.toThrow(
      /cannot open the audit log in .*a-file/,
    );
  });
});

afterAll(() => rm(root, { recursive: true, force: true }));
