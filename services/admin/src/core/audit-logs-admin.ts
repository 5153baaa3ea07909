import {
  type AuditStore,
  type AuditVerification,
  auditFilterParamsSchema,
  auditQueryParamsSchema,
  auditRecords,
} from '@gw/logs';
import {
  invalidRequest,
  methodNotAllowed,
  noEndpoint,
  notFound,
  serviceUnavailable,
  validate,
} from '@gw/shared';
import type { AdminRequest, AdminResult } from './admin-app.ts';

export interface AuditLogsAdminOptions {
  /** Where audit records are kept (SQLite embedded, PostgreSQL in a cluster); none when there is no database. */
  store?: AuditStore | undefined;
  /** Why there is no store, as the 503 says it (a cluster without GW_LOGS_DATABASE_URL). */
  unavailable?: string | undefined;
}

/** The media type of the export: one JSON record per line. */
const JSON_LINES = 'application/x-ndjson';

/** JSON lines of every record an export selects, oldest first, read from the store a page at a time. */
async function* jsonLines(store: AuditStore, filter: ReturnType<typeof auditFilterParamsSchema.parse>) {
  for await (const record of auditRecords(store, filter)) yield `${JSON.stringify(record)}\n`;
}

/**
 * `GET /api/audit-logs` (filters, seq cursor), `/api/audit-logs/{seq}`, `/api/audit-logs/export` (JSON lines,
 * streamed) and `/api/audit-logs/verify` (the chain check) (docs/admin-access.md "Audit log"). Read-only:
 * nothing in the API changes or deletes an audit record.
 */
export function createAuditLogsAdmin(options: AuditLogsAdminOptions) {
  // One chain check at a time per process: callers that ask meanwhile share its answer.
  let verifying: Promise<AuditVerification> | undefined;

  async function auditLogs(request: AdminRequest, path: string): Promise<AdminResult> {
    const [, item, ...rest] = request.segments;
    if (rest.length > 0) throw noEndpoint(request.method, path);
    if (request.method !== 'GET') throw methodNotAllowed({ method: request.method, path, allowed: 'GET' });
    const { store } = options;
    if (!store) throw serviceUnavailable(options.unavailable ?? 'the audit log is off on this gateway');
    const query = request.query ?? new URLSearchParams();
    if (item === undefined)
      return { status: 200, body: await store.query(validate(auditQueryParamsSchema, query)) };
    if (item === 'export') {
      const filter = validate(auditFilterParamsSchema, query);
      return {
        status: 200,
        body: undefined,
        stream: { contentType: JSON_LINES, chunks: jsonLines(store, filter) },
      };
    }
    if (item === 'verify') {
      verifying ??= store.verify().finally(() => {
        verifying = undefined;
      });
      return { status: 200, body: await verifying };
    }
    if (!/^[1-9]\d{0,15}$/.test(item)) {
      throw invalidRequest(
        `${path}: '${item.slice(0, 40)}' is not a record's seq (a positive integer)`,
        'seq',
      );
    }
    const record = await store.get(Number(item));
    if (!record) throw notFound(`audit record ${item}`);
    return { status: 200, body: record };
  }

  return { 'audit-logs': auditLogs };
}
