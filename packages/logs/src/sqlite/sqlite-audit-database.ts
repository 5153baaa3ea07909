import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { DatabaseSync, type SQLInputValue, type StatementSync } from 'node:sqlite';
import {
  AuditChainCheck,
  type AuditVerification,
  GENESIS_HASH,
  sealAuditRecord,
} from '../audit/audit-chain.ts';
import type { AuditQuery } from '../audit/audit-filter.ts';
import type { AuditEvent, AuditRecord } from '../audit/audit-record.ts';
import {
  AUDIT_COLUMNS,
  type AuditSqlDialect,
  auditInsert,
  auditPageStatement,
  auditRecordFromRow,
  checkAuditRow,
  toAuditPage,
} from '../audit/audit-sql.ts';
import type { AuditPage } from '../audit/audit-store.ts';

/** The file in the data directory that holds the audit log, next to request-logs.sqlite. */
export const SQLITE_AUDIT_FILE_NAME = 'audit-log.sqlite';

export interface SqliteAuditDatabaseOptions {
  /** The database file; its directory is created if missing (unless read-only). */
  file: string;
  /** Opens an existing file without writing to it (the verify command). */
  readOnly?: boolean;
}

// synchronous = FULL: an audit record survives a power cut once its append has answered (WAL's NORMAL may lose
// the last transactions); appends are a few a second at most.
const SCHEMA = `
PRAGMA journal_mode = WAL;
PRAGMA synchronous = FULL;
CREATE TABLE IF NOT EXISTS audit_log (
  "seq" INTEGER PRIMARY KEY, "time" INTEGER NOT NULL, "actor" TEXT NOT NULL, "role" TEXT,
  "action" TEXT NOT NULL, "target" TEXT NOT NULL, "status" INTEGER NOT NULL, "source" TEXT,
  "request_id" TEXT NOT NULL, "detail" TEXT, "before" TEXT, "after" TEXT,
  "prev_hash" TEXT NOT NULL, "hash" TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_log_time ON audit_log ("time");
CREATE INDEX IF NOT EXISTS audit_log_actor ON audit_log ("actor", "seq");
CREATE INDEX IF NOT EXISTS audit_log_request_id ON audit_log ("request_id");
`;

const DIALECT: AuditSqlDialect = { table: 'audit_log', placeholder: () => '?' };

/** What the store's thread asks of the database thread; each method runs synchronously there. */
export interface SqliteAuditMethods {
  append(event: AuditEvent, now: number): AuditRecord;
  query(query: AuditQuery): AuditPage;
  get(seq: number): AuditRecord | undefined;
  verify(): AuditVerification;
  ping(): void;
  close(): void;
}

/**
 * The audit log file, driven synchronously through `node:sqlite`: on its own thread in the gateway
 * (sqlite-audit-worker.ts), directly in the verify command.
 */
export class SqliteAuditDatabase implements SqliteAuditMethods {
  readonly #database: DatabaseSync;
  readonly #last: StatementSync;
  readonly #get: StatementSync;

  private constructor(database: DatabaseSync) {
    this.#database = database;
    this.#last = database.prepare('SELECT "seq", "time", "hash" FROM audit_log ORDER BY "seq" DESC LIMIT 1');
    this.#get = database.prepare(`SELECT ${AUDIT_COLUMNS} FROM audit_log WHERE "seq" = ?`);
  }

  static open(options: SqliteAuditDatabaseOptions): SqliteAuditDatabase {
    if (!options.readOnly) mkdirSync(path.dirname(options.file), { recursive: true });
    const database = new DatabaseSync(options.file, { readOnly: options.readOnly ?? false });
    try {
      database.exec('PRAGMA busy_timeout = 5000');
      if (!options.readOnly) database.exec(SCHEMA);
      return new SqliteAuditDatabase(database);
    } catch (error) {
      database.close();
      throw error;
    }
  }

  /**
   * The next record, in one IMMEDIATE transaction (the write lock is taken before the last record is read, so
   * another connection to the file cannot take the same seq).
   */
  append(event: AuditEvent, now: number): AuditRecord {
    this.#database.exec('BEGIN IMMEDIATE');
    try {
      const last = this.#last.get() as { seq: number; time: number; hash: string } | undefined;
      const record = sealAuditRecord(event, {
        seq: (last?.seq ?? 0) + 1,
        // Never before the record it follows: a clock stepped back keeps time in seq order.
        time: Math.max(now, last?.time ?? 0),
        prevHash: last?.hash ?? GENESIS_HASH,
      });
      const insert = auditInsert(record, DIALECT);
      this.#database.prepare(insert.text).run(...(insert.values as SQLInputValue[]));
      this.#database.exec('COMMIT');
      return record;
    } catch (error) {
      this.#database.exec('ROLLBACK');
      throw error;
    }
  }

  query(query: AuditQuery): AuditPage {
    const statement = auditPageStatement(query, DIALECT);
    const rows = this.#database.prepare(statement.text).all(...(statement.values as SQLInputValue[]));
    return toAuditPage(rows.map(auditRecordFromRow), query);
  }

  get(seq: number): AuditRecord | undefined {
    const row = this.#get.get(seq);
    return row === undefined ? undefined : auditRecordFromRow(row);
  }

  /** Takes the write lock and lets it go: throws what an append would (the file locked, read-only, gone). */
  ping(): void {
    this.#database.exec('BEGIN IMMEDIATE');
    this.#database.exec('ROLLBACK');
  }

  /** Reads the file row by row in seq order (one statement, no page held). */
  verify(): AuditVerification {
    const check = new AuditChainCheck();
    const rows = this.#database.prepare(`SELECT ${AUDIT_COLUMNS} FROM audit_log ORDER BY "seq"`).iterate();
    for (const row of rows) {
      const broken = checkAuditRow(check, row);
      if (broken) return broken;
    }
    return check.result();
  }

  close(): void {
    if (this.#database.isOpen) this.#database.close();
  }
}
