import { useMemo, useState } from 'react';
import { useAuth } from '../auth.tsx';
import { TimeChart } from '../chart.tsx';
import { formatCount, formatMs, formatPercent, formatTime, formatTokens, formatUsd } from '../format.ts';
import { Empty, PageHeader, QueryView, Table, useApiQuery } from '../ui.tsx';

interface Bucket {
  start: number;
  group: string | null;
  count: number;
  errors: number;
  error_rate: number;
  latency_p50_ms: number;
  latency_p95_ms: number;
  latency_p99_ms: number;
  input_tokens: number;
  output_tokens: number;
  cost: number;
}

interface Health {
  provider: string;
  state: string;
  error_rate: number;
  requests: number;
  latency_ms: { p50: number | null; p95: number | null };
  models: { model: string; state: string }[];
}

const RANGES = {
  '1 hour': [3_600_000, 60_000],
  '24 hours': [86_400_000, 3_600_000],
  '7 days': [7 * 86_400_000, 6 * 3_600_000],
} as const;

function Totals({ buckets }: { buckets: Bucket[] }) {
  const total = buckets.reduce(
    (sum, bucket) => ({
      count: sum.count + bucket.count,
      errors: sum.errors + bucket.errors,
      tokens: sum.tokens + bucket.input_tokens + bucket.output_tokens,
      cost: sum.cost + bucket.cost,
    }),
    { count: 0, errors: 0, tokens: 0, cost: 0 },
  );
  return (
    <dl className="cards">
      <div>
        <dt>Requests</dt>
        <dd data-testid="total-requests">{formatCount(total.count)}</dd>
      </div>
      <div>
        <dt>Errors</dt>
        <dd>
          {formatCount(total.errors)} ({formatPercent(total.count ? total.errors / total.count : 0)})
        </dd>
      </div>
      <div>
        <dt>Tokens</dt>
        <dd>{formatTokens(total.tokens)}</dd>
      </div>
      <div>
        <dt>Cost</dt>
        <dd>{formatUsd(total.cost)}</dd>
      </div>
    </dl>
  );
}

function Charts({ buckets, from, to }: { buckets: Bucket[]; from: number; to: number }) {
  const data = useMemo(() => {
    const times = buckets.map((bucket) => bucket.start);
    const of = (pick: (bucket: Bucket) => number) => buckets.map(pick);
    return {
      times,
      requests: [
        { label: 'requests', values: of((b) => b.count) },
        { label: 'errors', values: of((b) => b.errors) },
      ],
      latency: [
        { label: 'p50', values: of((b) => b.latency_p50_ms) },
        { label: 'p95', values: of((b) => b.latency_p95_ms) },
        { label: 'p99', values: of((b) => b.latency_p99_ms) },
      ],
      tokens: [
        { label: 'input', values: of((b) => b.input_tokens) },
        { label: 'output', values: of((b) => b.output_tokens) },
      ],
      cost: [{ label: 'cost', values: of((b) => b.cost) }],
    };
  }, [buckets]);
  return (
    <div className="charts">
      <TimeChart
        title="Requests and errors"
        unit="requests"
        from={from}
        to={to}
        times={data.times}
        series={data.requests}
      />
      <TimeChart
        title="Latency percentiles"
        unit="ms"
        from={from}
        to={to}
        times={data.times}
        series={data.latency}
      />
      <TimeChart title="Tokens" unit="tokens" from={from} to={to} times={data.times} series={data.tokens} />
      <TimeChart title="Cost" unit="USD" from={from} to={to} times={data.times} series={data.cost} />
    </div>
  );
}

function Breakdown({ from, groupBy }: { from: number; groupBy: 'provider' | 'model' }) {
  const stats = useApiQuery<{ buckets: Bucket[] }>('/api/logs/stats', {
    query: { from, bucket_ms: 31 * 86_400_000, group_by: groupBy },
  });
  return (
    <section aria-labelledby={`by-${groupBy}`}>
      <h2 id={`by-${groupBy}`}>By {groupBy}</h2>
      <QueryView query={stats}>
        {({ buckets }) => {
          const groups = new Map<string, Bucket[]>();
          for (const bucket of buckets)
            groups.set(bucket.group ?? '—', [...(groups.get(bucket.group ?? '—') ?? []), bucket]);
          const rows = [...groups].map(([group, list]) => ({
            group,
            count: list.reduce((s, b) => s + b.count, 0),
            errors: list.reduce((s, b) => s + b.errors, 0),
            p95: Math.max(...list.map((b) => b.latency_p95_ms)),
            tokens: list.reduce((s, b) => s + b.input_tokens + b.output_tokens, 0),
            cost: list.reduce((s, b) => s + b.cost, 0),
          }));
          return (
            <Table
              caption={`Requests by ${groupBy}`}
              rows={rows}
              rowKey={(row) => row.group}
              empty="No requests in this range."
              columns={[
                { header: groupBy, cell: (row) => row.group },
                { header: 'Requests', cell: (row) => formatCount(row.count) },
                { header: 'Errors', cell: (row) => formatCount(row.errors) },
                { header: 'p95 latency', cell: (row) => formatMs(row.p95) },
                { header: 'Tokens', cell: (row) => formatTokens(row.tokens) },
                { header: 'Cost', cell: (row) => formatUsd(row.cost) },
              ]}
            />
          );
        }}
      </QueryView>
    </section>
  );
}

function ProviderHealth() {
  const health = useApiQuery<Health[]>('/api/health/providers', { refetchInterval: 10_000 });
  return (
    <section aria-labelledby="health">
      <h2 id="health">Provider health</h2>
      <QueryView query={health}>
        {(rows) => (
          <Table
            caption="Provider health"
            rows={rows}
            rowKey={(row) => row.provider}
            empty="No providers configured."
            columns={[
              { header: 'Provider', cell: (row) => row.provider },
              {
                header: 'State',
                cell: (row) => <span className={`state state-${row.state}`}>{row.state}</span>,
              },
              { header: 'Requests', cell: (row) => formatCount(row.requests) },
              { header: 'Error rate', cell: (row) => formatPercent(row.error_rate) },
              { header: 'p95 latency', cell: (row) => formatMs(row.latency_ms.p95) },
              {
                header: 'Models',
                cell: (row) => row.models.map((model) => `${model.model} (${model.state})`).join(', ') || '—',
              },
            ]}
          />
        )}
      </QueryView>
    </section>
  );
}

export default function Overview() {
  const { can } = useAuth();
  const [range, setRange] = useState<keyof typeof RANGES>('24 hours');
  const [span, bucket] = RANGES[range];
  // The range's start, kept until the range changes (a new start each render would refetch forever).
  const from = useMemo(() => Math.floor((Date.now() - span) / bucket) * bucket, [span, bucket]);
  const stats = useApiQuery<{ buckets: Bucket[] }>('/api/logs/stats', {
    query: { from, bucket_ms: bucket },
    refetchInterval: 15_000,
  });
  return (
    <>
      <PageHeader title="Overview">
        <label>
          Range{' '}
          <select value={range} onChange={(event) => setRange(event.target.value as keyof typeof RANGES)}>
            {Object.keys(RANGES).map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
      </PageHeader>
      <p className="muted">
        Since {formatTime(from)}, in buckets of {bucket / 60_000} min.
      </p>
      <QueryView query={stats}>
        {({ buckets }) =>
          buckets.length === 0 ? (
            <Empty>No requests in this range yet.</Empty>
          ) : (
            <>
              <Totals buckets={buckets} />
              <Charts buckets={buckets} from={from} to={from + span + bucket} />
            </>
          )
        }
      </QueryView>
      <div className="two">
        <Breakdown from={from} groupBy="provider" />
        <Breakdown from={from} groupBy="model" />
      </div>
      {can('health:read') && <ProviderHealth />}
    </>
  );
}
