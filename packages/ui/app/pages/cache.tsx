// The response cache: how often it answered (from the request log: hits, misses, per scope), and removals of a
// scope, of one entry (the id a hit reports in x-gw-cache-entry-id) or of a cache key.
import type { CacheRemoval, LogPage, LogRecord, VirtualKey } from '@gw/admin/api-types';
import { useState } from 'react';
import { api } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { formatCount, formatPercent } from '../format.ts';
import { Field, Form, type Option, PageHeader, QueryView, Table, useApiQuery } from '../ui.tsx';

interface ScopeRow {
  scope: string;
  label: string;
  hits: number;
  misses: number;
}

const DAY = 86_400_000;
/** The most records one page of the log holds: the rate is over the last this many requests of the day. */
const SAMPLE = 1000;

/** Hits and misses per cache scope (`vk:<key id>`, or `anonymous` for requests without a key). */
function byScope(records: LogRecord[]): ScopeRow[] {
  const rows = new Map<string, ScopeRow>();
  for (const record of records) {
    if (record.cache_outcome !== 'hit' && record.cache_outcome !== 'miss') continue;
    const scope = record.virtual_key_id ? `vk:${record.virtual_key_id}` : 'anonymous';
    const row = rows.get(scope) ?? { scope, label: record.virtual_key_name ?? 'no key', hits: 0, misses: 0 };
    if (record.cache_outcome === 'hit') row.hits++;
    else row.misses++;
    rows.set(scope, row);
  }
  return [...rows.values()].sort((a, b) => b.hits + b.misses - (a.hits + a.misses));
}

function HitRate() {
  const [from] = useState(() => Date.now() - DAY);
  const logs = useApiQuery<LogPage>('/api/logs', { query: { from, limit: SAMPLE } });
  return (
    <QueryView query={logs}>
      {(body) => {
        const rows = byScope(body.records);
        const hits = rows.reduce((sum, row) => sum + row.hits, 0);
        const looked = rows.reduce((sum, row) => sum + row.hits + row.misses, 0);
        return (
          <>
            <dl className="cards">
              <div>
                <dt>Hit rate (24 h)</dt>
                <dd data-testid="hit-rate">{looked ? formatPercent(hits / looked) : '—'}</dd>
              </div>
              <div>
                <dt>Answered from the cache</dt>
                <dd>{formatCount(hits)}</dd>
              </div>
              <div>
                <dt>Looked up</dt>
                <dd>{formatCount(looked)}</dd>
              </div>
            </dl>
            <Table
              caption="Cache use per scope"
              rows={rows}
              rowKey={(row) => row.scope}
              empty="No request looked in the cache in the last 24 hours (cache.enabled, or no request yet)."
              columns={[
                { header: 'Scope', cell: (row) => <code>{row.scope}</code> },
                { header: 'Key', cell: (row) => row.label },
                { header: 'Hits', cell: (row) => formatCount(row.hits) },
                { header: 'Misses', cell: (row) => formatCount(row.misses) },
                { header: 'Hit rate', cell: (row) => formatPercent(row.hits / (row.hits + row.misses)) },
              ]}
            />
          </>
        );
      }}
    </QueryView>
  );
}

function Purge() {
  const keys = useApiQuery<VirtualKey[]>('/api/governance/virtual-keys');
  const [done, setDone] = useState<string>();
  const scopes: Option[] = [
    { value: 'global', label: 'global (shared by every key)' },
    { value: 'anonymous', label: 'anonymous (requests without a key)' },
    ...(keys.data ?? []).map((key) => ({ value: `vk:${key.id}`, label: `key ${key.name}` })),
  ];
  return (
    <Form
      label="Remove from the cache"
      submit="Remove"
      onSubmit={async (values) => {
        const scope = encodeURIComponent(values.scope ?? '');
        const path = values.entry
          ? `/api/cache/scopes/${scope}/entries/${encodeURIComponent(values.entry)}`
          : values.key
            ? `/api/cache/scopes/${scope}/keys/${encodeURIComponent(values.key)}`
            : `/api/cache/scopes/${scope}`;
        if (!values.entry && !values.key && !confirm(`Remove every entry of ${values.scope}?`)) return;
        setDone(undefined);
        const answer = await api<CacheRemoval>(path, { method: 'DELETE' });
        setDone(
          `Removed ${answer.removed} ${answer.removed === 1 ? 'entry' : 'entries'} from ${values.scope}.`,
        );
      }}
    >
      <Field label="Scope" name="scope" options={scopes} />
      <Field label="Entry id" name="entry" hint="Optional: the x-gw-cache-entry-id of a hit." />
      <Field
        label="Cache key"
        name="key"
        hint="Optional: the x-gw-cache-key a caller set. Neither: the whole scope."
      />
      {done && (
        <p className="ok" role="status">
          {done}
        </p>
      )}
    </Form>
  );
}

export default function Cache() {
  const { can } = useAuth();
  return (
    <>
      <PageHeader title="Cache" />
      {can('logs:read') && <HitRate />}
      {can('cache:write') && <Purge />}
    </>
  );
}
