import type {
  AlertChannel,
  AlertChannelInput,
  AlertHistoryPage,
  AlertRule,
  AlertRuleInput,
} from '@gw/admin/api-types';
import { api } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { CrudSection } from '../crud.tsx';
import { display, formatTime } from '../format.ts';
import { PageHeader, QueryView, Table, useApiMutation, useApiQuery } from '../ui.tsx';
import { AlertChannelForm } from './alert-channel-form.tsx';
import { AlertRuleForm } from './alert-rule-form.tsx';

export default function Alerts() {
  const { can } = useAuth();
  const history = useApiQuery<AlertHistoryPage>('/api/alerts/history', { query: { limit: 50 } });
  const test = useApiMutation(
    (id: string) => api(`/api/alerts/channels/${encodeURIComponent(id)}/test`, { method: 'POST' }),
    ['/api/alerts'],
  );
  return (
    <>
      <PageHeader title="Alerts" />
      {test.error && (
        <p className="error" role="alert">
          {test.error.message}
        </p>
      )}
      <CrudSection<AlertChannel>
        title="Channels"
        listPath="/api/alerts/channels"
        itemPath={(id) => `/api/alerts/channels/${encodeURIComponent(id)}`}
        writePermission="alerts:write"
        editMethod="PATCH"
        createTemplate={
          {
            id: 'ops-webhook',
            type: 'webhook',
            name: 'Ops',
            url: 'https://example.com/hook',
            secret: 'change-me-sixteen-chars',
          } satisfies AlertChannelInput
        }
        form={({ item, submit, cancel }) => <AlertChannelForm item={item} submit={submit} cancel={cancel} />}
        columns={[
          { header: 'Id', cell: (item) => display(item.id) },
          { header: 'Type', cell: (item) => display(item.type) },
          { header: 'Name', cell: (item) => display(item.name) },
          { header: 'Enabled', cell: (item) => display(item.enabled ?? true) },
        ]}
        rowActions={(item) =>
          can('alerts:write') && (
            <button type="button" className="secondary" onClick={() => test.mutate(String(item.id))}>
              Send test<span className="sr-only"> to {String(item.id)}</span>
            </button>
          )
        }
      />
      <CrudSection<AlertRule>
        title="Rules"
        listPath="/api/alerts/rules"
        itemPath={(id) => `/api/alerts/rules/${encodeURIComponent(id)}`}
        writePermission="alerts:write"
        editMethod="PATCH"
        createTemplate={
          {
            id: 'errors',
            kind: 'error_rate',
            threshold: 0.1,
            channels: ['ops-webhook'],
          } satisfies AlertRuleInput
        }
        form={({ item, submit, cancel }) => <AlertRuleForm item={item} submit={submit} cancel={cancel} />}
        columns={[
          { header: 'Id', cell: (item) => display(item.id) },
          { header: 'Kind', cell: (item) => display(item.kind) },
          { header: 'Channels', cell: (item) => display(item.channels) },
          { header: 'Enabled', cell: (item) => display(item.enabled ?? true) },
        ]}
      />
      <section aria-labelledby="history">
        <h2 id="history">History</h2>
        <QueryView query={history}>
          {(body) => (
            <Table
              caption="Alert history"
              rows={body.entries}
              rowKey={(entry) => entry.id}
              empty="No alerts sent yet."
              columns={[
                { header: 'Time', cell: (entry) => formatTime(entry.time) },
                { header: 'Rule', cell: (entry) => entry.rule_id },
                { header: 'Channel', cell: (entry) => entry.channel_id },
                { header: 'Action', cell: (entry) => entry.action },
                { header: 'Summary', cell: (entry) => entry.summary },
                {
                  header: 'Outcome',
                  cell: (entry) => `${entry.outcome}${entry.error ? `: ${entry.error}` : ''}`,
                },
              ]}
            />
          )}
        </QueryView>
      </section>
    </>
  );
}
