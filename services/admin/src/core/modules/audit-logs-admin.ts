import {
  type AuditStore,
  type AuditVerification,
  auditFilterParamsSchema,
  auditQueryParamsSchema,
  auditRecords,
} from '@gw/logs';
import { invalidRequest, notFound, serviceUnavailable, validate } from '@gw/shared';
import { type AdminRoute, route } from '../http/admin-route.ts';

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
export function createAuditLogsAdmin(options: AuditLogsAdminOptions): AdminRoute[] {
  // One chain check at a time per process: callers that ask meanwhile share its answer.
  let verifying: Promise<AuditVerification> | undefined;
  function storeOf(): AuditStore {
    if (options.store) return options.store;
    throw serviceUnavailable(options.unavailable ?? 'the audit log is off on this gateway');
  }
  const read = (path: string, handle: AdminRoute['handle']): AdminRoute => ({
    method: 'GET',
    path,
    permission: 'audit:read',
    handle,
  });

  return [
    read('/audit-logs', async (request) => {
      const store = storeOf();
      const query = request.query ?? new URLSearchParams();
      return { status: 200, body: await store.query(validate(auditQueryParamsSchema, query)) };
    }),
    read('/audit-logs/export', async (request) => {
      const store = storeOf();
      const filter = validate(auditFilterParamsSchema, request.query ?? new URLSearchParams());
      return {
        status: 200,
        body: undefined,
        stream: { contentType: JSON_LINES, chunks: jsonLines(store, filter) },
      };
    }),
    read('/audit-logs/verify', async () => {
      const store = storeOf();
      verifying ??= store.verify().finally(() => {
        verifying = undefined;
      });
      return { status: 200, body: await verifying };
    }),
    route({
      method: 'GET',
      path: '/audit-logs/:seq',
      permission: 'audit:read',
      handle: async (request) => {
        const store = storeOf();
        const { seq } = request.params;
        if (!/^[1-9]\d{0,15}$/.test(seq)) {
          throw invalidRequest(
            `${request.path}: '${seq.slice(0, 40)}' is not a record's seq (a positive integer)`,
            'seq',
          );
        }
        const record = await store.get(Number(seq));
        if (!record) throw notFound(`audit record ${seq}`);
        return { status: 200, body: record };
      },
    }),
  ];
}
