import type { AuditPage, AuditVerification } from '@gw/admin/api-types';
import { useState } from 'react';
import { display, formatTime } from '../format.ts';
import { ErrorMessage, Loading, PageHeader, QueryView, Table, useApiQuery } from '../ui.tsx';

export default function Audit() {
  const [cursor, setCursor] = useState<string>();
  const [verifying, setVerifying] = useState(false);
  const page = useApiQuery<AuditPage>('/api/audit-logs', {
    query: { limit: 100, cursor },
  });
  const verify = useApiQuery<AuditVerification>(verifying ? '/api/audit-logs/verify' : undefined);
  return (
    <>
      <PageHeader title="Audit log">
        <button type="button" className="secondary" onClick={() => setVerifying(true)}>
          Verify the chain
        </button>
      </PageHeader>
      {verifying &&
        (verify.error ? (
          <ErrorMessage error={verify.error} />
        ) : verify.data ? (
          <p role="status" className={verify.data.ok ? 'ok' : 'error'}>
            {verify.data.ok ? `The chain holds: ${verify.data.records} records.` : verify.data.message}
          </p>
        ) : (
          <Loading what="Verifying" />
        ))}
      <QueryView query={page}>
        {(body) => (
          <>
            <Table
              caption="Audit records"
              rows={body.records}
              rowKey={(record) => String(record.seq)}
              empty="Nothing recorded yet."
              columns={[
                { header: '#', cell: (record) => record.seq },
                { header: 'Time', cell: (record) => formatTime(record.time) },
                { header: 'Actor', cell: (record) => record.actor },
                { header: 'Role', cell: (record) => display(record.role) },
                { header: 'Action', cell: (record) => record.action },
                { header: 'Target', cell: (record) => <code>{record.target}</code> },
                { header: 'Status', cell: (record) => record.status },
                { header: 'Detail', cell: (record) => display(record.detail) },
              ]}
            />
            {body.next_cursor && (
              <button type="button" className="secondary" onClick={() => setCursor(body.next_cursor!)}>
                Older records
              </button>
            )}
          </>
        )}
      </QueryView>
    </>
  );
}
