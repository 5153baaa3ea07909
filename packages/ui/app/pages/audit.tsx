// The audit log: who changed what, found by actor, action, target, status and time; each change opened as the
// fields it changed, before and after (audit-diff.tsx); the chain verified on demand.
import type { AuditPage, AuditVerification } from '@gw/admin/api-types';
import { type FormEvent, useState } from 'react';
import type { Query } from '../api.ts';
import { display, formatTime } from '../format.ts';
import { ErrorMessage, Field, Loading, PageHeader, QueryView, Table, useApiQuery } from '../ui.tsx';
import { AuditDiff } from './audit-diff.tsx';

type AuditRecord = AuditPage['records'][number];

const ACTIONS = ['', 'create', 'update', 'delete', 'rotate', 'login', 'logout', 'access_denied'];
const TEXT_FILTERS = ['actor', 'action', 'target_prefix', 'status'] as const;

export default function Audit() {
  const [cursor, setCursor] = useState<string>();
  const [filter, setFilter] = useState<Query>({});
  const [open, setOpen] = useState<number>();
  const [verifying, setVerifying] = useState(false);
  const page = useApiQuery<AuditPage>('/api/audit-logs', {
    query: { ...filter, limit: 100, cursor },
  });
  const verify = useApiQuery<AuditVerification>(verifying ? '/api/audit-logs/verify' : undefined);
  function apply(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const next: Query = {};
    for (const name of TEXT_FILTERS) {
      const value = String(data.get(name) ?? '').trim();
      if (value) next[name] = value;
    }
    const from = String(data.get('from') ?? '');
    if (from) next.from = new Date(from).getTime();
    setCursor(undefined);
    setOpen(undefined);
    setFilter(next);
  }
  const changed = (record: AuditRecord) => record.before !== null || record.after !== null;
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
      <form className="filters" aria-label="Audit filters" onSubmit={apply}>
        <Field label="Actor" name="actor" placeholder="token:…, session:…, bootstrap" />
        <Field label="Action" name="action" options={ACTIONS} />
        <Field label="Target starts with" name="target_prefix" placeholder="PATCH /api/providers" />
        <Field label="Status" name="status" type="number" />
        <Field label="Since" name="from" type="datetime-local" />
        <div className="actions">
          <button type="submit">Apply filters</button>
        </div>
      </form>
      <QueryView query={page}>
        {(body) => {
          const opened = body.records.find((record) => record.seq === open);
          return (
            <>
              {opened && (
                <section className="panel" aria-label={`Changes of record ${opened.seq}`}>
                  <h2>
                    Record {opened.seq}: {opened.action} <code>{opened.target}</code>
                  </h2>
                  <p className="muted">
                    By {opened.actor} ({display(opened.role)}) at {formatTime(opened.time)}, answered{' '}
                    {opened.status}.
                  </p>
                  <AuditDiff before={opened.before} after={opened.after} />
                  <button type="button" className="secondary" onClick={() => setOpen(undefined)}>
                    Close
                  </button>
                </section>
              )}
              <Table
                caption="Audit records"
                rows={body.records}
                rowKey={(record) => String(record.seq)}
                empty="Nothing recorded that matches."
                columns={[
                  { header: '#', cell: (record) => record.seq },
                  { header: 'Time', cell: (record) => formatTime(record.time) },
                  { header: 'Actor', cell: (record) => record.actor },
                  { header: 'Role', cell: (record) => display(record.role) },
                  { header: 'Action', cell: (record) => record.action },
                  { header: 'Target', cell: (record) => <code>{record.target}</code> },
                  { header: 'Status', cell: (record) => record.status },
                  { header: 'Detail', cell: (record) => display(record.detail) },
                  {
                    header: 'Changes',
                    cell: (record) =>
                      changed(record) ? (
                        <button type="button" className="secondary" onClick={() => setOpen(record.seq)}>
                          Before and after<span className="sr-only"> of record {record.seq}</span>
                        </button>
                      ) : (
                        '—'
                      ),
                  },
                ]}
              />
              {body.next_cursor && (
                <button type="button" className="secondary" onClick={() => setCursor(body.next_cursor!)}>
                  Older records
                </button>
              )}
            </>
          );
        }}
      </QueryView>
    </>
  );
}
