import { escapeIdentifier, Pool, type PoolClient, TypeOverrides, types } from 'pg';
import {
  AuditChainCheck,
  type AuditVerification,
  GENESIS_HASH,
  sealAuditRecord,
} from '../audit/audit-chain.ts';
import { type AuditQueryInput, auditQuerySchema } from '../audit/audit-filter.ts';
import {
  type AuditEvent,
  type AuditEventInput,
  type AuditRecord,
  auditEventSchema,
} from '../audit/audit-record.ts';
import {
  AUDIT_COLUMNS,
  type AuditSqlDialect,
  auditInsert,
  auditPageStatement,
  auditRecordFromRow,
  checkAuditRow,
  toAuditPage,
  VERIFY_PAGE,
} from '../audit/audit-sql.ts';
import type { AuditPage, AuditStore } from '../audit/audit-store.ts';
import { checkOut } from './pool-client.ts';

export interface PostgresAuditStoreOptions {
  /** `postgres://user:password@host:port/database`: the request log's database (GW_LOGS_DATABASE_URL). */
  url: string;
  /** The schema that holds the table; `public` by default. Created if missing. */
  schema?: string;
  /** Connections in the pool; 2 by default (appends are one at a time per chain anyway). */
  poolSize?: number;
  /** Told about errors of idle connections (a restarted server), which have no caller to throw to. */
  onError?: (error: unknown) => void;
  /** How long a connection may take to open; 5 s by default. */
  connectTimeoutMs?: number;
  /** Creates nothing (the verify command): the table must exist. */
  readOnly?: boolean;
}

/** One entry of an audit queue: its stream id, and the event (undefined when it could not be decoded). */
export interface QueuedAuditEvent {
  id: string;
  event: AuditEventInput | undefined;
}

/** Whether stream id `a` (`<ms>-<seq>`) comes after `b`. */
function streamIdAfter(a: string, b: string): boolean {
  const [aMs = 0n, aSeq = 0n] = a.split('-').map(BigInt);
  const [bMs = 0n, bSeq = 0n] = b.split('-').map(BigInt);
  return aMs > bMs || (aMs === bMs && aSeq > bSeq);
}

/** bigint columns (seq, time) as numbers: JavaScript numbers are exact far beyond any audit log's length. */
const typeParsers = new TypeOverrides();
typeParsers.setTypeParser(types.builtins.INT8, Number);

/**
 * The audit log of a cluster, on PostgreSQL: the table `audit_log` next to `request_logs`. Every admin
 * replica appends to the same chain: an append is one transaction that takes a transaction-level advisory lock
 * (one per table), reads the last record and inserts the next, so appends from any number of processes are
 * serialized into one chain with seq 1, 2, 3… and no gaps (a sequence would leave gaps on rollback, which a
 * check could not tell from a deleted record).
 */
export class PostgresAuditStore implements AuditStore {
  readonly #pool: Pool;
  readonly #dialect: AuditSqlDialect;
  readonly #lockName: string;

  readonly #cursors: string;

  private constructor(pool: Pool, schema: string) {
    this.#pool = pool;
    const table = `${schema}.audit_log`;
    this.#dialect = { table, placeholder: (index) => `$${index}` };
    this.#cursors = `${schema}.audit_queue_cursor`;
    this.#lockName = `gw audit_log append ${table}`;
  }

  /** Connects and creates the schema, table and indexes that are missing (under a lock: replicas start together). */
  static async open(options: PostgresAuditStoreOptions): Promise<PostgresAuditStore> {
    const pool = new Pool({
      connectionString: options.url,
      max: options.poolSize ?? 2,
      types: typeParsers,
      application_name: 'gw-audit',
      // An unreachable database fails a change's audit within seconds (it fails closed), never hangs it.
      connectionTimeoutMillis: options.connectTimeoutMs ?? 5_000,
    });
    pool.on('error', options.onError ?? ((error) => process.emitWarning(error)));
    const schema = escapeIdentifier(options.schema ?? 'public');
    const table = `${schema}.audit_log`;
    const index = (name: string, columns: string) =>
      `CREATE INDEX IF NOT EXISTS ${escapeIdentifier(`audit_log_${name}`)} ON ${table} (${columns})`;
    try {
      if (options.readOnly) {
        const { rows } = await pool.query('SELECT to_regclass($1) IS NOT NULL AS present', [table]);
        if (rows[0]?.present !== true) throw new Error(`there is no table ${table} in this database`);
        return new PostgresAuditStore(pool, schema);
      }
      const client = await checkOut(pool);
      try {
        await client.query('BEGIN');
        await client.query("SELECT pg_advisory_xact_lock(hashtext('gw audit_log migration'))");
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${table} (` +
            '"seq" bigint PRIMARY KEY, "time" bigint NOT NULL, "actor" text NOT NULL, "role" text,' +
            ' "action" text NOT NULL, "target" text NOT NULL, "status" smallint NOT NULL, "source" text,' +
            ' "request_id" text NOT NULL, "detail" text, "before" text, "after" text,' +
            ' "prev_hash" text NOT NULL, "hash" text NOT NULL)',
        );
        await client.query(index('time', '"time"'));
        await client.query(index('actor', '"actor", "seq"'));
        await client.query(index('request_id', '"request_id"'));
        // How far each queue of records (audit.on_store_failure: queue) has been written into the chain.
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${schema}.audit_queue_cursor ("queue" text PRIMARY KEY, "last_id" text NOT NULL)`,
        );
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => {});
        throw error;
      } finally {
        client.release();
      }
      return new PostgresAuditStore(pool, schema);
    } catch (error) {
      await pool.end();
      throw error;
    }
  }

  async append(event: AuditEventInput): Promise<AuditRecord> {
    const parsed = auditEventSchema.parse(event);
    return this.#appending(async (_client, next) => next(parsed));
  }

  /**
   * Appends the entries of a queue (a Redis stream, audit.on_store_failure: queue) in their order, each once:
   * under the append lock it reads how far the queue was written (its cursor, moved in the same transaction),
   * so entries another replica wrote already are skipped. An entry without an event (undecodable) only moves
   * the cursor. Answers how many records were appended.
   */
  async appendQueued(queue: string, entries: readonly QueuedAuditEvent[]): Promise<number> {
    const parsed = entries.map((entry) => ({
      id: entry.id,
      event: entry.event && auditEventSchema.parse(entry.event),
    }));
    if (parsed.length === 0) return 0;
    return this.#appending(async (client, next) => {
      const { rows } = await client.query(`SELECT "last_id" FROM ${this.#cursors} WHERE "queue" = $1`, [
        queue,
      ]);
      const cursor = rows[0]?.last_id as string | undefined;
      let appended = 0;
      let last = cursor;
      for (const entry of parsed) {
        if (last !== undefined && !streamIdAfter(entry.id, last)) continue;
        if (entry.event) {
          await next(entry.event);
          appended += 1;
        }
        last = entry.id;
      }
      if (last !== cursor)
        await client.query(
          `INSERT INTO ${this.#cursors} ("queue", "last_id") VALUES ($1, $2) ON CONFLICT ("queue") DO UPDATE SET "last_id" = EXCLUDED."last_id"`,
          [queue, last],
        );
      return appended;
    });
  }

  /**
   * One transaction holding the chain's append lock: `next` seals and inserts an event as the record after the
   * last one (read once, then followed in memory).
   */
  async #appending<T>(
    work: (client: PoolClient, next: (event: AuditEvent) => Promise<AuditRecord>) => Promise<T>,
  ): Promise<T> {
    const client = await checkOut(this.#pool);
    try {
      await client.query('BEGIN');
      // Held until COMMIT: the next append, from this process or another, reads the last record after it.
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [this.#lockName]);
      const { rows } = await client.query(
        `SELECT "seq", "time", "hash" FROM ${this.#dialect.table} ORDER BY "seq" DESC LIMIT 1`,
      );
      let last = rows[0] as { seq: number; time: number; hash: string } | undefined;
      const next = async (event: AuditEvent) => {
        const record = sealAuditRecord(event, {
          seq: (last?.seq ?? 0) + 1,
          // One chain, many clocks: never before the record it follows.
          time: Math.max(Date.now(), last?.time ?? 0),
          prevHash: last?.hash ?? GENESIS_HASH,
        });
        const insert = auditInsert(record, this.#dialect);
        await client.query(insert.text, insert.values);
        last = record;
        return record;
      };
      const result = await work(client, next);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async query(query: AuditQueryInput = {}): Promise<AuditPage> {
    const parsed = auditQuerySchema.parse(query);
    const statement = auditPageStatement(parsed, this.#dialect);
    const { rows } = await this.#pool.query(statement.text, statement.values);
    return toAuditPage(rows.map(auditRecordFromRow), parsed);
  }

  async get(seq: number): Promise<AuditRecord | undefined> {
    const { rows } = await this.#pool.query(
      `SELECT ${AUDIT_COLUMNS} FROM ${this.#dialect.table} WHERE "seq" = $1`,
      [seq],
    );
    return rows[0] === undefined ? undefined : auditRecordFromRow(rows[0]);
  }

  /** Reads the chain in keyset pages of seq (no long transaction; appends go on meanwhile). */
  async verify(): Promise<AuditVerification> {
    const check = new AuditChainCheck();
    let after = 0;
    for (;;) {
      const { rows } = await this.#pool.query(
        `SELECT ${AUDIT_COLUMNS} FROM ${this.#dialect.table} WHERE "seq" > $1 ORDER BY "seq" LIMIT $2`,
        [after, VERIFY_PAGE],
      );
      for (const row of rows) {
        const broken = checkAuditRow(check, row);
        if (broken) return broken;
      }
      if (rows.length < VERIFY_PAGE) return check.result();
      after = Number(rows[rows.length - 1]!.seq);
    }
  }

  async ping(): Promise<void> {
    await this.#pool.query('SELECT 1');
  }

  /** Closes it as a resource of a composition root (its AsyncDisposableStack). */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  async close(): Promise<void> {
    if (!this.#pool.ended) await this.#pool.end();
  }
}
