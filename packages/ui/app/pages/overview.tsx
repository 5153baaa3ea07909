import type {
  LogStats,
  LogStatsBucket,
  ProviderHealthReport,
  SpendCsv,
  SpendGroup,
  Team,
} from '@gw/admin/api-types';
import { useMemo, useState } from 'react';
import { api } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { type Series, TimeChart, zeroFilled } from '../chart.tsx';
import { FirstRun } from '../first-run.tsx';
import { formatCount, formatMs, formatPercent, formatTime, formatTokens, formatUsd } from '../format.ts';
import { Empty, PageHeader, QueryView, Table, useApiQuery } from '../ui.tsx';

const RANGES = {
  '1 hour': [3_600_000, 60_000],
  '24 hours': [86_400_000, 3_600_000],
  '7 days': [7 * 86_400_000, 6 * 3_600_000],
} as const;

/** One bucket per range: the stats API's widest, so a group's rows for the range are one row each. */
const WHOLE_RANGE_MS = 31 * 86_400_000;

interface Range {
  from: number;
  to: number;
  bucket: number;
}

/** Rows of one group dimension over the whole range, summed per group. */
function groupTotals(buckets: LogStatsBucket[]) {
  const groups = new Map<
    string | null,
    { count: number; errors: number; p95: number; tokens: number; cost: number }
  >();
  for (const bucket of buckets) {
    const sum = groups.get(bucket.group) ?? { count: 0, errors: 0, p95: 0, tokens: 0, cost: 0 };
    sum.count += bucket.count;
    sum.errors += bucket.errors;
    sum.p95 = Math.max(sum.p95, bucket.latency_p95_ms);
    sum.tokens += bucket.input_tokens + bucket.output_tokens;
    sum.cost += bucket.cost;
    groups.set(bucket.group, sum);
  }
  return [...groups].map(([group, sum]) => ({ group, ...sum }));
}

function useGroups(from: number, groupBy: string) {
  return useApiQuery<LogStats>('/api/logs/stats', {
    query: { from, bucket_ms: WHOLE_RANGE_MS, group_by: groupBy },
    refetchInterval: 15_000,
  });
}

function Totals({ buckets, keyless }: { buckets: LogStatsBucket[]; keyless: number | undefined }) {
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
        <dt>Cost of governed traffic</dt>
        <dd data-testid="total-cost">{formatUsd(total.cost)}</dd>
        <dd className="note" data-testid="keyless">
          {keyless === undefined
            ? 'What governance charged to virtual keys.'
            : `What governance charged to virtual keys; ${formatCount(keyless)} keyless ${keyless === 1 ? 'request is' : 'requests are'} not priced ($0 counted).`}
        </dd>
      </div>
    </dl>
  );
}

function Charts({ buckets, range }: { buckets: LogStatsBucket[]; range: Range }) {
  const data = useMemo(() => {
    const series = (label: string, pick: (bucket: LogStatsBucket) => number): Series => ({
      label,
      values: zeroFilled(buckets, range, pick).values,
    });
    const served = new Set(buckets.filter((bucket) => bucket.count > 0).map((bucket) => bucket.start));
    const measured = (label: string, pick: (bucket: LogStatsBucket) => number): Series => {
      const { times, values } = zeroFilled(buckets, range, pick);
      return { label, values: values.map((value, at) => (served.has(times[at]!) ? value : null)) };
    };
    return {
      times: zeroFilled([], range, () => 0).times,
      requests: [series('served', (b) => b.count - b.errors), series('errors', (b) => b.errors)],
      // A bucket without requests has no latency: a gap in the line, not a 0.
      latency: [
        measured('p50', (b) => b.latency_p50_ms),
        measured('p95', (b) => b.latency_p95_ms),
        measured('p99', (b) => b.latency_p99_ms),
      ],
      tokens: [series('input', (b) => b.input_tokens), series('output', (b) => b.output_tokens)],
      cost: [series('cost', (b) => b.cost)],
    };
  }, [buckets, range]);
  const charts = [
    { title: 'Requests (served and errors)', unit: 'requests', kind: 'bars', series: data.requests },
    { title: 'Latency percentiles', unit: 'ms', series: data.latency },
    { title: 'Tokens', unit: 'tokens', kind: 'bars', series: data.tokens },
    { title: 'Cost', unit: 'USD', kind: 'bars', series: data.cost },
  ] as const;
  return (
    <div className="charts">
      {charts.map((chart) => (
        <TimeChart key={chart.title} {...chart} from={range.from} to={range.to} times={data.times} />
      ))}
    </div>
  );
}

/** Errors per bucket by type: which failures, and when. */
function ErrorTypes({ range }: { range: Range }) {
  const stats = useApiQuery<LogStats>('/api/logs/stats', {
    query: { from: range.from, bucket_ms: range.bucket, group_by: 'error_type' },
    refetchInterval: 15_000,
  });
  const data = useMemo(() => {
    const rows = (stats.data?.buckets ?? []).filter((bucket) => bucket.group !== null);
    const types = [...new Set(rows.map((bucket) => bucket.group!))].sort();
    return {
      times: zeroFilled([], range, () => 0).times,
      series: types.map((type) => ({
        label: type,
        values: zeroFilled(
          rows.filter((bucket) => bucket.group === type),
          range,
          (bucket) => bucket.count,
        ).values,
      })),
    };
  }, [stats.data, range]);
  return (
    <section aria-labelledby="error-types">
      <h2 id="error-types">Error types over time</h2>
      <QueryView query={stats}>
        {() =>
          data.series.length === 0 ? (
            <Empty>No failed requests in this range.</Empty>
          ) : (
            <TimeChart
              title="Failed requests by error type"
              unit="requests"
              kind="bars"
              from={range.from}
              to={range.to}
              times={data.times}
              series={data.series}
            />
          )
        }
      </QueryView>
    </section>
  );
}

const TOP = 10;

/** The groups that spent most (then sent most) in the range, the top ten. */
function TopBySpend(props: {
  title: string;
  column: string;
  query: ReturnType<typeof useGroups>;
  /** What a null group is (requests without the dimension); left out when undefined. */
  nullLabel?: string;
  /** Names of the groups' ids (teams), where the caller may read them. */
  names?: Map<string, string> | undefined;
}) {
  return (
    <section aria-labelledby={`top-${props.column}`}>
      <h2 id={`top-${props.column}`}>{props.title}</h2>
      <QueryView query={props.query}>
        {({ buckets }) => {
          const rows = groupTotals(buckets)
            .filter((row) => row.group !== null || props.nullLabel)
            .sort((a, b) => b.cost - a.cost || b.count - a.count)
            .slice(0, TOP);
          return (
            <Table
              caption={props.title}
              rows={rows}
              rowKey={(row) => row.group ?? ''}
              empty="No requests in this range."
              columns={[
                {
                  header: props.column,
                  cell: (row) =>
                    row.group === null ? props.nullLabel : (props.names?.get(row.group) ?? row.group),
                },
                { header: 'Cost', cell: (row) => formatUsd(row.cost) },
                { header: 'Requests', cell: (row) => formatCount(row.count) },
                { header: 'Errors', cell: (row) => formatCount(row.errors) },
                { header: 'p95 latency', cell: (row) => formatMs(row.p95) },
                { header: 'Tokens', cell: (row) => formatTokens(row.tokens) },
              ]}
            />
          );
        }}
      </QueryView>
    </section>
  );
}

function ProviderHealth() {
  const health = useApiQuery<ProviderHealthReport[]>('/api/health/providers', { refetchInterval: 10_000 });
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

const SPEND_GROUPS: Record<SpendGroup, string> = {
  virtual_key: 'virtual key',
  team: 'team',
  customer: 'customer',
  user: 'user',
  business_unit: 'business unit',
  model: 'model',
  provider: 'provider',
};

/** `2026-12`: the current UTC month, as `<input type="month">` holds it. */
const thisMonth = () => new Date().toISOString().slice(0, 7);

/** The month's bounds as `/api/spend` takes them (ISO dates, UTC). */
function monthBounds(month: string): { from: string; to: string } {
  const [year, index] = month.split('-').map(Number) as [number, number];
  return { from: `${month}-01`, to: new Date(Date.UTC(year, index, 1)).toISOString().slice(0, 10) };
}

/** A CSV of a month's spend per key, team, customer… from `/api/spend`, the same figures as the budgets. */
function SpendReportDownload() {
  const [groupBy, setGroupBy] = useState<SpendGroup>('virtual_key');
  const [month, setMonth] = useState(thisMonth);
  const [failure, setFailure] = useState<string>();
  const download = async () => {
    setFailure(undefined);
    try {
      const csv = await api<SpendCsv>('/api/spend', {
        query: { group_by: groupBy, format: 'csv', ...monthBounds(month) },
      });
      const link = document.createElement('a');
      link.href = URL.createObjectURL(new Blob([csv], { type: 'text/csv' }));
      link.download = `spend-${groupBy}-${month}.csv`;
      link.click();
      URL.revokeObjectURL(link.href);
    } catch (error) {
      setFailure((error as Error).message);
    }
  };
  return (
    <section aria-labelledby="spend-report">
      <h2 id="spend-report">Spend report</h2>
      <div className="actions">
        <label>
          By{' '}
          <select value={groupBy} onChange={(event) => setGroupBy(event.target.value as SpendGroup)}>
            {Object.entries(SPEND_GROUPS).map(([value, name]) => (
              <option key={value} value={value}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Month{' '}
          <input type="month" value={month} onChange={(event) => setMonth(event.target.value)} required />
        </label>
        <button type="button" onClick={download} disabled={!month}>
          Download spend report
        </button>
      </div>
      {failure && (
        <p className="error" role="alert">
          {failure}
        </p>
      )}
      <p className="muted">
        CSV of the requests logged, their tokens and what their budgets were charged (UTC month).
      </p>
    </section>
  );
}

export default function Overview() {
  const { can } = useAuth();
  const [rangeName, setRangeName] = useState<keyof typeof RANGES>('24 hours');
  const [span, bucket] = RANGES[rangeName];
  // The range's start, kept until the range changes (a new start each render would refetch forever); its
  // end takes in the bucket now running.
  const range = useMemo(() => {
    const from = Math.floor((Date.now() - span) / bucket) * bucket;
    return { from, to: from + span + bucket, bucket };
  }, [span, bucket]);
  const stats = useApiQuery<LogStats>('/api/logs/stats', {
    query: { from: range.from, bucket_ms: bucket },
    refetchInterval: 15_000,
  });
  const keys = useGroups(range.from, 'virtual_key_name');
  const teams = useGroups(range.from, 'team_id');
  const models = useGroups(range.from, 'model');
  const teamList = useApiQuery<Team[]>(can('teams:read') ? '/api/governance/teams' : undefined);
  const teamNames = useMemo(
    () => new Map((teamList.data ?? []).map((team) => [team.id, team.name])),
    [teamList.data],
  );
  const keyless = keys.data && groupTotals(keys.data.buckets).find((row) => row.group === null)?.count;
  return (
    <>
      <PageHeader title="Overview">
        <label>
          Range{' '}
          <select
            value={rangeName}
            onChange={(event) => setRangeName(event.target.value as keyof typeof RANGES)}
          >
            {Object.keys(RANGES).map((name) => (
              <option key={name}>{name}</option>
            ))}
          </select>
        </label>
      </PageHeader>
      <FirstRun untilServed />
      <p className="muted">
        Since {formatTime(range.from)}, in buckets of {bucket / 60_000} min.
      </p>
      <QueryView query={stats}>
        {({ buckets }) =>
          buckets.length === 0 ? (
            <Empty>No requests in this range yet.</Empty>
          ) : (
            <>
              <Totals buckets={buckets} keyless={keys.data ? (keyless ?? 0) : undefined} />
              <Charts buckets={buckets} range={range} />
            </>
          )
        }
      </QueryView>
      <ErrorTypes range={range} />
      <div className="two">
        <TopBySpend
          title="Top virtual keys by spend"
          column="Virtual key"
          query={keys}
          nullLabel="no key (not priced)"
        />
        <TopBySpend
          title="Top teams by spend"
          column="Team"
          query={teams}
          nullLabel="no team"
          names={teamNames}
        />
        <TopBySpend
          title="Top models by spend"
          column="Model"
          query={models}
          nullLabel="no model (refused)"
        />
      </div>
      {can('budgets:read') && <SpendReportDownload />}
      {can('health:read') && <ProviderHealth />}
    </>
  );
}
