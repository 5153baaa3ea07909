import type { AuditVerification } from './audit-chain.ts';
import type { AuditFilterInput, AuditQueryInput } from './audit-filter.ts';
import type { AuditEventInput, AuditRecord } from './audit-record.ts';

/** One page of audit records and where the next one starts (null on the last page). */
export interface AuditPage {
  records: AuditRecord[];
  /** The seq the page ended at, as text: pass it as `cursor` with the same order. */
  next_cursor: string | null;
}

/**
 * The audit log (docs/admin-access.md "Audit log"): append-only, each record chained by hash to the one
 * before. SQLite in embedded mode, PostgreSQL in a cluster, both held to one contract suite (`@gw/testkit`
 * `runAuditStoreContract`). There is no update and no delete, and no retention: audit records are kept.
 */
export interface AuditStore {
  /**
   * Stores an event as the next record of the chain (seq, time, prev_hash, hash added) and answers it. Appends
   * from several processes on one database make one chain. Rejects an event that is not one (ZodError).
   */
  append(event: AuditEventInput): Promise<AuditRecord>;
  /** A page of the records the filter selects, by seq in the query's order (newest first by default). */
  query(query?: AuditQueryInput): Promise<AuditPage>;
  get(seq: number): Promise<AuditRecord | undefined>;
  /** Checks the whole chain from seq 1; names the first broken record. */
  verify(): Promise<AuditVerification>;
  /**
   * Resolves when an append could be made now (the database answers and its write lock can be taken), rejects
   * otherwise: the admin asks before a change when audit fails closed (docs/admin-access.md "Audit log").
   */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Records a query or an export reads at a time. */
const EXPORT_PAGE = 500;

/**
 * Every record the filter selects, by seq from the oldest, read a page at a time (an export streams it: the
 * range is never held whole).
 */
export async function* auditRecords(
  store: AuditStore,
  filter: AuditFilterInput = {},
): AsyncGenerator<AuditRecord> {
  let cursor: string | undefined;
  do {
    const page = await store.query({
      ...filter,
      order: 'asc',
      limit: EXPORT_PAGE,
      ...(cursor && { cursor }),
    });
    yield* page.records;
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined);
}
