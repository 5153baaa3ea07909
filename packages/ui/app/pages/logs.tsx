import type { LogPage, LogRecord, LogStats, Team, VirtualKey } from '@gw/admin/api-types';
import { type FormEvent, useEffect, useId, useState } from 'react';
import { Link } from 'react-router';
import { checkGateway, openLogStream, type Query } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { display, formatMs, formatTime, formatTokens, formatUsd } from '../format.ts';
import { ErrorMessage, Field, Loading, PageHeader, Table, useApiQuery } from '../ui.tsx';

/** The filter fields the form sends as typed (`from` is a date, turned into epoch ms). */
const FILTERS = [
  'provider',
  'model',
  'status_class',
  'error_type',
  'virtual_key_name',
  'team_id',
  'cache_outcome',
  'guardrail_outcome',
  'q',
] as const;

function LogTable({ rows, caption }: { rows: LogRecord[]; caption: string }) {
  return (
    <Table
      caption={caption}
      rows={rows}
      rowKey={(row) => row.id}
      empty="No requests match."
      columns={[
        {
          header: 'Time',
          cell: (row) => <Link to={`/logs/${encodeURIComponent(row.id)}`}>{formatTime(row.time)}</Link>,
        },
        {
          header: 'Status',
          cell: (row) => (
            <span className={row.status >= 400 ? 'bad' : ''}>
              {row.status}
              {row.error_type && ` ${row.error_type}`}
            </span>
          ),
        },
        { header: 'Provider', cell: (row) => display(row.provider) },
        { header: 'Model', cell: (row) => display(row.model) },
        { header: 'Key', cell: (row) => display(row.virtual_key_name) },
        { header: 'Latency', cell: (row) => formatMs(row.latency_ms) },
        { header: 'Tokens', cell: (row) => formatTokens(row.input_tokens + row.output_tokens) },
        { header: 'Cost', cell: (row) => formatUsd(row.cost) },
      ]}
    />
  );
}

/** Waits before the n-th reconnect (1 s, 2 s, 4 s… at most 30 s). */
const backoffMs = (attempt: number) => Math.min(30_000, 1_000 * 2 ** attempt);

/**
 * The live tail: one WebSocket while the page shows it. A connection that drops (the gateway restarting, a
 * proxy's idle timeout, 1013 for a reader that fell behind) is opened again after a growing wait, reset once
 * one opens.
 */
function LiveTail({ filter }: { filter: Query }) {
  const [records, setRecords] = useState<LogRecord[]>([]);
  const [state, setState] = useState('connecting');
  useEffect(() => {
    let socket: WebSocket | undefined;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let failures = 0;
    let stopped = false;
    const connect = () => {
      const ws = openLogStream(filter);
      socket = ws;
      ws.onopen = () => {
        failures = 0;
        setState('live');
      };
      ws.onmessage = (message) => {
        // The tail sends each record as `GET /api/logs/{id}` answers it.
        const record = JSON.parse(String(message.data)) as LogRecord;
        setRecords((old) => [record, ...old].slice(0, 200));
      };
      ws.onclose = (event) => {
        if (stopped) return;
        if (failures === 0) checkGateway();
        const wait = backoffMs(failures++);
        const why = `${event.code}${event.reason ? `: ${event.reason}` : ''}`;
        setState(`disconnected (${why}); reconnecting in ${Math.round(wait / 1000)} s`);
        timer = setTimeout(connect, wait);
      };
    };
    connect();
    return () => {
      stopped = true;
      clearTimeout(timer);
      socket?.close(1000);
    };
  }, [filter]);
  return (
    <section aria-labelledby="tail">
      <h2 id="tail">
        Live tail{' '}
        <span className="muted" aria-live="polite" data-testid="tail-state">
          {state}
        </span>
      </h2>
      {records.length === 0 ? (
        <p className="muted">Waiting for requests…</p>
      ) : (
        <LogTable rows={records} caption="Live requests" />
      )}
    </section>
  );
}

/** The names a picker offers (the keys or teams the caller may read); a free text field without them. */
function Picker(props: { label: string; name: string; path: string | undefined; value: 'name' | 'id' }) {
  const id = useId();
  // Read again each time the form shows: a key or team made a moment ago is offered.
  const list = useApiQuery<Array<VirtualKey | Team>>(props.path, { refetchOnMount: 'always' });
  if (!list.data) return <Field label={props.label} name={props.name} />;
  const choices = [...list.data].sort((a, b) => a.name.localeCompare(b.name));
  return (
    <div className="field">
      <label htmlFor={id}>{props.label}</label>
      <select id={id} name={props.name} defaultValue="">
        <option value="">—</option>
        {choices.map((item) => (
          <option key={item.id} value={item[props.value]}>
            {item.name}
          </option>
        ))}
      </select>
    </div>
  );
}

/** The error types the log holds in the last 30 days (what a filter can find). */
function ErrorTypeField() {
  const [from] = useState(() => Date.now() - 30 * 86_400_000);
  const stats = useApiQuery<LogStats>('/api/logs/stats', {
    query: { from, bucket_ms: 31 * 86_400_000, group_by: 'error_type' },
  });
  const types = [...new Set((stats.data?.buckets ?? []).map((bucket) => bucket.group ?? ''))].sort();
  return <Field label="Error type" name="error_type" options={['', ...types.filter(Boolean)]} />;
}

export default function Logs() {
  const { can } = useAuth();
  const [filter, setFilter] = useState<Query>({});
  const [cursor, setCursor] = useState<string>();
  const [live, setLive] = useState(false);
  const page = useApiQuery<LogPage>('/api/logs', {
    query: { ...filter, limit: 50, cursor },
    enabled: !live,
  });
  function apply(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const data = new FormData(event.currentTarget);
    const next: Query = {};
    for (const name of FILTERS) {
      const value = String(data.get(name) ?? '').trim();
      if (value) next[name] = value;
    }
    const from = String(data.get('from') ?? '');
    if (from) next.from = new Date(from).getTime();
    setCursor(undefined);
    setFilter(next);
    // The same filters again: read again (new records arrived).
    if (JSON.stringify(next) === JSON.stringify(filter) && !cursor) void page.refetch();
  }
  return (
    <>
      <PageHeader title="Logs">
        <button type="button" className="secondary" aria-pressed={live} onClick={() => setLive(!live)}>
          {live ? 'Stop live tail' : 'Live tail'}
        </button>
      </PageHeader>
      <form className="filters" aria-label="Filters" onSubmit={apply}>
        <Field label="Provider" name="provider" />
        <Field label="Model" name="model" />
        <Field label="Status" name="status_class" options={['', '2xx', '4xx', '5xx']} />
        <ErrorTypeField />
        <Picker
          label="Virtual key"
          name="virtual_key_name"
          path={can('keys:read') ? '/api/governance/virtual-keys' : undefined}
          value="name"
        />
        <Picker
          label="Team"
          name="team_id"
          path={can('teams:read') ? '/api/governance/teams' : undefined}
          value="id"
        />
        <Field label="Cache" name="cache_outcome" options={['', 'hit', 'miss', 'bypass']} />
        <Field
          label="Guardrails"
          name="guardrail_outcome"
          options={['', 'passed', 'flagged', 'redacted', 'blocked']}
        />
        <Field label="Text" name="q" />
        <Field label="Since" name="from" type="datetime-local" />
        <div className="actions">
          <button type="submit">Apply filters</button>
        </div>
      </form>
      {live ? (
        <LiveTail filter={filter} />
      ) : page.error ? (
        <ErrorMessage error={page.error} />
      ) : page.isPending ? (
        <Loading />
      ) : (
        <>
          <LogTable rows={page.data?.records ?? []} caption="Requests" />
          <div className="actions">
            {cursor && (
              <button type="button" className="secondary" onClick={() => setCursor(undefined)}>
                First page
              </button>
            )}
            {page.data?.next_cursor && (
              <button type="button" className="secondary" onClick={() => setCursor(page.data!.next_cursor!)}>
                Next page
              </button>
            )}
          </div>
        </>
      )}
    </>
  );
}
