import path from 'node:path';
import type { AuditVerification } from '../audit/audit-chain.ts';
import { type AuditQueryInput, auditQuerySchema } from '../audit/audit-filter.ts';
import { type AuditEventInput, type AuditRecord, auditEventSchema } from '../audit/audit-record.ts';
import type { AuditPage, AuditStore } from '../audit/audit-store.ts';
import { SQLITE_AUDIT_FILE_NAME, type SqliteAuditMethods } from './sqlite-audit-database.ts';
import { SqliteThread } from './sqlite-thread.ts';

export { SQLITE_AUDIT_FILE_NAME, SqliteAuditDatabase } from './sqlite-audit-database.ts';

/**
 * The audit log of embedded mode: `audit-log.sqlite` in the data directory, a file of its own next to the
 * request log's (request-log retention never touches it, and it can be copied or checked alone), on a worker
 * thread of its own like the request log: an append waits for the disk (synchronous = FULL), and a chain check
 * reads the whole file.
 */
export class SqliteAuditStore implements AuditStore {
  readonly #thread: SqliteThread<SqliteAuditMethods>;

  private constructor(thread: SqliteThread<SqliteAuditMethods>) {
    this.#thread = thread;
  }

  /** Opens (and creates when missing) the audit log of the data directory, on a new thread. */
  static async open(options: { dataDir: string }): Promise<SqliteAuditStore> {
    const file = path.join(options.dataDir, SQLITE_AUDIT_FILE_NAME);
    const thread = await SqliteThread.start<SqliteAuditMethods>({
      script: new URL('./sqlite-audit-worker.ts', import.meta.url),
      data: { file },
      what: 'audit log',
      where: options.dataDir,
    });
    return new SqliteAuditStore(thread);
  }

  async append(event: AuditEventInput): Promise<AuditRecord> {
    // Validated on the caller's thread: a bad event rejects with its ZodError, never reaching the database.
    return this.#thread.call('append', auditEventSchema.parse(event), Date.now());
  }

  async query(query: AuditQueryInput = {}): Promise<AuditPage> {
    return this.#thread.call('query', auditQuerySchema.parse(query));
  }

  async get(seq: number): Promise<AuditRecord | undefined> {
    return this.#thread.call('get', seq);
  }

  async verify(): Promise<AuditVerification> {
    return this.#thread.call('verify');
  }

  async ping(): Promise<void> {
    await this.#thread.call('ping');
  }

  /** Closes it as a resource of a composition root (its AsyncDisposableStack). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  close(): Promise<void> {
    return this.#thread.close();
  }
}
