import { escapeIdentifier, type Pool, type PoolClient } from 'pg';
import type { LogRecord } from '../requests/log-record.ts';
import { checkOut } from './pool-client.ts';

/** Each field's column type, and whether the column takes NULL; the insert's arrays use the same types. */
export const POSTGRES_COLUMNS: Record<keyof LogRecord, readonly [type: string, nullable: boolean]> = {
  id: ['text', false],
  time: ['bigint', false],
  surface: ['text', false],
  route: ['text', false],
  provider: ['text', true],
  model: ['text', true],
  requested_model: ['text', true],
  status: ['smallint', false],
  error_type: ['text', true],
  error_message: ['text', true],
  upstream_status: ['smallint', true],
  upstream_body: ['text', true],
  latency_ms: ['double precision', false],
  time_to_first_token_ms: ['double precision', true],
  input_tokens: ['bigint', false],
  output_tokens: ['bigint', false],
  cached_tokens: ['bigint', false],
  reasoning_tokens: ['bigint', false],
  cost: ['double precision', false],
  cost_breakdown: ['text', true],
  virtual_key_id: ['text', true],
  virtual_key_name: ['text', true],
  team_id: ['text', true],
  customer_id: ['text', true],
  user_id: ['text', true],
  business_unit_id: ['text', true],
  selected_key_id: ['text', true],
  attempts: ['text', true],
  fallback_index: ['integer', true],
  routing: ['text', true],
  cache_outcome: ['text', true],
  guardrail_outcome: ['text', true],
  request_content: ['text', true],
  response_content: ['text', true],
  content_truncated: ['boolean', false],
  trace_id: ['text', true],
};

/** Nullable columns added after the first release (also in the SQLite store's list). */
const ADDED_COLUMNS: ReadonlyArray<keyof LogRecord> = [
  'business_unit_id',
  'attempts',
  'error_message',
  'upstream_status',
  'upstream_body',
  'routing',
  'cost_breakdown',
];

/** How `q` is answered: through trigram indexes (pg_trgm), or by scanning the rows the other filters leave. */
export type TextSearch = 'trigram' | 'scan';

export interface MigrateOptions {
  /** The quoted, schema-qualified table name. */
  table: string;
  schema: string;
  textSearchIndex: boolean;
}

/**
 * Creates what is missing, under an advisory lock so that log workers starting together do not race on the
 * catalog. The trigram indexes need pg_trgm: a trusted extension since PostgreSQL 13, so a database owner
 * creates it without superuser; where it cannot be created, text search still works by scanning.
 */
export async function migrate(pool: Pool, options: MigrateOptions): Promise<TextSearch> {
  const { table } = options;
  // id is COLLATE "C" so that ties sort byte-wise, as in SQLite: both stores page in the same order.
  const columns = Object.entries(POSTGRES_COLUMNS).map(
    ([field, [type, nullable]]) =>
      `"${field}" ${type}${field === 'id' ? ' COLLATE "C" PRIMARY KEY' : ''}${nullable ? '' : ' NOT NULL'}`,
  );
  const index = (name: string, columns: string, method = 'btree') =>
    `CREATE INDEX IF NOT EXISTS ${escapeIdentifier(`request_logs_${name}`)} ON ${table} USING ${method} (${columns})`;
  const client = await checkOut(pool);
  try {
    await client.query('BEGIN');
    await client.query("SELECT pg_advisory_xact_lock(hashtext('gw request_logs migration'))");
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${escapeIdentifier(options.schema)}`);
    const { rows } = await client.query('SELECT to_regclass($1) IS NULL AS missing', [table]);
    await client.query(`CREATE TABLE IF NOT EXISTS ${table} (${columns.join(', ')})`);
    // Columns added after the first release: a table made by an older gw gains them (nullable, no rewrite).
    for (const column of ADDED_COLUMNS) {
      await client.query(
        `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS "${column}" ${POSTGRES_COLUMNS[column][0]}`,
      );
    }
    await client.query(index('time', '"time", "id"'));
    await client.query(index('provider', '"provider", "time"'));
    await client.query(index('model', '"model", "time"'));
    await client.query(index('status', '"status", "time"'));
    await client.query(index('virtual_key', '"virtual_key_id", "time"'));
    // Dropped counts: a row per minute, reason and process, written by the same workers as the records.
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${table.replace(/request_logs$/, 'dropped_counts')} (` +
        '"bucket_start" bigint NOT NULL, "reason" text NOT NULL, "source" text NOT NULL, "count" bigint NOT NULL,' +
        ' PRIMARY KEY ("bucket_start", "reason", "source"))',
    );
    if (rows[0]?.missing === true) {
      await optional(client, 'lz4', async () => {
        // lz4 compresses content (a row past 2 kB is compressed) much faster than the default pglz, a
        // large part of an insert's cost; a server built without lz4 keeps pglz.
        for (const field of ['request_content', 'response_content']) {
          await client.query(`ALTER TABLE ${table} ALTER COLUMN "${field}" SET COMPRESSION lz4`);
        }
      });
    }
    if (options.textSearchIndex) {
      await optional(client, 'trigram', async () => {
        await client.query('CREATE EXTENSION IF NOT EXISTS pg_trgm');
        await client.query(index('request_text', '"request_content" gin_trgm_ops', 'gin'));
        await client.query(index('response_text', '"response_content" gin_trgm_ops', 'gin'));
      });
    }
    // Whoever created the indexes (this call or an earlier one), queries use them.
    const indexed = await client.query('SELECT to_regclass($1) IS NOT NULL AS present', [
      `${escapeIdentifier(options.schema)}.request_logs_request_text`,
    ]);
    await client.query('COMMIT');
    return indexed.rows[0]?.present === true ? 'trigram' : 'scan';
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}

/** Runs steps the store can do without, inside the migration's transaction: true when they succeeded. */
async function optional(client: PoolClient, name: string, steps: () => Promise<void>): Promise<boolean> {
  await client.query(`SAVEPOINT ${name}`);
  try {
    await steps();
    await client.query(`RELEASE SAVEPOINT ${name}`);
    return true;
  } catch {
    await client.query(`ROLLBACK TO SAVEPOINT ${name}`);
    return false;
  }
}
