import type { Statement } from '../requests/log-sql.ts';
import type { AuditChainCheck } from './audit-chain.ts';
import type { AuditFilter, AuditQuery } from './audit-filter.ts';
import { AUDIT_RECORD_FIELDS, type AuditRecord, auditRecordSchema } from './audit-record.ts';
import type { AuditPage } from './audit-store.ts';

/** What differs between SQLite and PostgreSQL for the statements both audit stores share. */
export interface AuditSqlDialect {
  /** The table, qualified as the backend needs. */
  table: string;
  /** The text of the n-th bound value (1-based): `?` or `$n`. */
  placeholder(index: number): string;
}

/** Column names are quoted everywhere: `time` is a keyword in PostgreSQL. */
export const AUDIT_COLUMNS = AUDIT_RECORD_FIELDS.map((field) => `"${field}"`).join(', ');

/** Filter fields that select records equal to their value. */
const EQUAL_FIELDS = ['actor', 'role', 'action', 'status', 'request_id'] as const satisfies ReadonlyArray<
  keyof AuditFilter & keyof AuditRecord
>;

/**
 * One page in seq order after the cursor, one record more than the limit so that the page knows whether
 * another follows. The target prefix compares the start of the target exactly (case-sensitive in both
 * databases, where LIKE would ignore case in SQLite).
 */
export function auditPageStatement(query: AuditQuery, dialect: AuditSqlDialect): Statement {
  const values: unknown[] = [];
  const bind = (value: unknown) => {
    values.push(value);
    return dialect.placeholder(values.length);
  };
  const conditions: string[] = [];
  for (const field of EQUAL_FIELDS) {
    const value = query[field];
    if (value !== undefined) conditions.push(`"${field}" = ${bind(value)}`);
  }
  if (query.from !== undefined) conditions.push(`"time" >= ${bind(query.from)}`);
  if (query.to !== undefined) conditions.push(`"time" < ${bind(query.to)}`);
  if (query.target_prefix !== undefined) {
    // Bound twice: SQLite's placeholders are positional.
    const prefix = query.target_prefix;
    conditions.push(`substr("target", 1, length(${bind(prefix)})) = ${bind(prefix)}`);
  }
  if (query.cursor !== undefined)
    conditions.push(`"seq" ${query.order === 'desc' ? '<' : '>'} ${bind(Number(query.cursor))}`);
  const where = conditions.length === 0 ? '' : ` WHERE ${conditions.join(' AND ')}`;
  return {
    text: `SELECT ${AUDIT_COLUMNS} FROM ${dialect.table}${where} ORDER BY "seq" ${query.order.toUpperCase()} LIMIT ${bind(query.limit + 1)}`,
    values,
  };
}

/** The page answered from the rows of auditPageStatement (already decoded). */
export function toAuditPage(records: AuditRecord[], query: AuditQuery): AuditPage {
  if (records.length <= query.limit) return { records, next_cursor: null };
  const page = records.slice(0, query.limit);
  return { records: page, next_cursor: String(page[page.length - 1]!.seq) };
}

/** The INSERT of one record (every column, in AUDIT_RECORD_FIELDS order) and its values. */
export function auditInsert(record: AuditRecord, dialect: AuditSqlDialect): Statement {
  const placeholders = AUDIT_RECORD_FIELDS.map((_, index) => dialect.placeholder(index + 1));
  return {
    text: `INSERT INTO ${dialect.table} (${AUDIT_COLUMNS}) VALUES (${placeholders.join(', ')})`,
    values: AUDIT_RECORD_FIELDS.map((field) => {
      const value = record[field];
      // before and after are kept as JSON text; SQL NULL for null.
      return field === 'before' || field === 'after'
        ? value === null
          ? null
          : JSON.stringify(value)
        : value;
    }),
  };
}

/** A stored row as a record: before and after parsed from their JSON text, every field checked. */
export function auditRecordFromRow(row: Record<string, unknown>): AuditRecord {
  const json = (text: unknown) => (typeof text === 'string' ? JSON.parse(text) : text);
  return auditRecordSchema.parse({ ...row, before: json(row['before']), after: json(row['after']) });
}

/**
 * Feeds stored rows, in seq order, to a chain check; answers at the first break. A row that does not read
 * as a record (a field edited into bad JSON) is `malformed`, not an exception.
 */
export function checkAuditRow(check: AuditChainCheck, row: Record<string, unknown>) {
  let record: AuditRecord;
  try {
    record = auditRecordFromRow(row);
  } catch (error) {
    const seq = Number(row['seq']);
    return check.malformed(Number.isInteger(seq) ? seq : undefined, firstIssue(error));
  }
  return check.next(record);
}

function firstIssue(error: unknown): string {
  const issues = (error as { issues?: Array<{ path: PropertyKey[]; message: string }> }).issues;
  const issue = issues?.[0];
  if (issue) return `${issue.path.map(String).join('.') || 'record'}: ${issue.message}`;
  return error instanceof Error ? error.message : String(error);
}

/** The rows a chain check reads at a time from PostgreSQL; SQLite reads its own file row by row. */
export const VERIFY_PAGE = 1_000;
