import { type FormEvent, useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { openLogStream, type Query } from '../api.ts';
import { display, formatMs, formatTime, formatTokens, formatUsd } from '../format.ts';
import { ErrorMessage, Field, Loading, PageHeader, Table, useApiQuery } from '../ui.tsx';

export interface LogRecord {
  id: string;
  time: number;
  surface: string;
  route: string;
  provider: string | null;
  model: string | null;
  status: number;
  error_type: string | null;
  latency_ms: number;
  input_tokens: number;
  output_tokens: number;
  cost: number;
  virtual_key_name: string | null;
  request_content?: string | null;
  response_content?: string | null;
}

const FILTERS = ['provider', 'model', 'status_class', 'virtual_key_id', 'team_id', 'q'] as const;

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
          cell: (row) => <span className={row.status >= 400 ? 'bad' : ''}>{row.status}</span>,
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

function LiveTail({ filter }: { filter: Query }) {
  const [records, setRecords] = useState<LogRecord[]>([]);
  const [state, setState] = useState('connecting');
  const socket = useRef<WebSocket>(undefined);
  useEffect(() => {
    const ws = openLogStream(filter);
    socket.current = ws;
    ws.onopen = () => setState('live');
    ws.onclose = (event) =>
      setState(
        event.code === 1000 ? 'closed' : `closed (${event.code}${event.reason ? `: ${event.reason}` : ''})`,
      );
    ws.onerror = () => setState('refused: check the filters and your role');
    ws.onmessage = (message) => {
      const record = JSON.parse(String(message.data)) as LogRecord;
      setRecords((old) => [record, ...old].slice(0, 200));
    };
    return () => ws.close(1000);
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

export default function Logs() {
  const [filter, setFilter] = useState<Query>({});
  const [cursor, setCursor] = useState<string>();
  const [live, setLive] = useState(false);
  const page = useApiQuery<{ records: LogRecord[]; next_cursor: string | null }>('/api/logs', {
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
        <Field label="Virtual key id" name="virtual_key_id" />
        <Field label="Team id" name="team_id" />
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
