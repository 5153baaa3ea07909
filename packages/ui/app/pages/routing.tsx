// Routing health: the load balancer's state of every provider, key and model (healthy, degraded, failed,
// recovering), their scores and traffic multipliers, and its settings (`/api/load-balancer/config`).
import type {
  LoadBalancerChange,
  LoadBalancerConfig,
  ProviderHealthReport,
  TargetHealthReport,
} from '@gw/admin/api-types';
import { api } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { formatCount, formatMs, formatPercent, formatTime } from '../format.ts';
import { Field, Form, PageHeader, QueryView, State, Table, useApiMutation, useApiQuery } from '../ui.tsx';

/** A provider, a key, a model or a target, as one row of the table. */
type Row = TargetHealthReport & { level: string; name: string };

const columns = [
  {
    header: 'Provider, key or model',
    cell: (row: Row) => <span className={`level-${row.level}`}>{row.name}</span>,
  },
  { header: 'State', cell: (row: Row) => <State state={row.state} /> },
  { header: 'Since', cell: (row: Row) => formatTime(row.since) },
  { header: 'Score', cell: (row: Row) => row.score.toFixed(2) },
  { header: 'Traffic ×', cell: (row: Row) => row.weight_multiplier.toFixed(2) },
  { header: 'Requests', cell: (row: Row) => formatCount(row.requests) },
  { header: 'Error rate', cell: (row: Row) => formatPercent(row.error_rate) },
  { header: 'p95', cell: (row: Row) => formatMs(row.latency_ms.p95) },
];

/** A provider, then its keys, then its models, then each key serving one model, as rows of one table. */
function rowsOf(providers: ProviderHealthReport[]): Row[] {
  return providers.flatMap((provider) => [
    { ...provider, level: 'provider', name: provider.provider },
    ...provider.keys.map((key) => ({ ...key, level: 'key', name: `${provider.provider} · key ${key.id}` })),
    ...provider.models.map((model) => ({
      ...model,
      level: 'model',
      name: `${provider.provider} · ${model.model}`,
    })),
    ...provider.targets.map((target) => ({
      ...target,
      level: 'target',
      name: `${provider.provider} · ${target.key ?? 'no key'} → ${target.model ?? 'any model'}`,
    })),
  ]);
}

function BalancerSettings() {
  const { can } = useAuth();
  const config = useApiQuery<LoadBalancerConfig>('/api/load-balancer/config');
  const save = useApiMutation(
    (body: LoadBalancerChange) => api('/api/load-balancer/config', { method: 'PUT', body }),
    ['/api/load-balancer'],
  );
  return (
    <QueryView query={config}>
      {(current) =>
        !can('health:write') ? (
          <section aria-labelledby="balancer">
            <h2 id="balancer">Load balancer</h2>
            <pre className="content">{JSON.stringify(current, null, 2)}</pre>
          </section>
        ) : (
          <Form
            label="Load balancer"
            submit="Save load balancer"
            onSubmit={(values) =>
              save.mutateAsync({
                enabled: values.enabled === 'yes',
                degraded_error_rate: Number(values.degraded_error_rate),
                failed_error_rate: Number(values.failed_error_rate),
                consecutive_failures: Number(values.consecutive_failures),
                min_samples: Number(values.min_samples),
              })
            }
          >
            <Field
              label="Adaptive weights"
              name="enabled"
              options={['yes', 'no']}
              defaultValue={current.enabled ? 'yes' : 'no'}
              hint="No: weights stay as configured (health is still measured)."
            />
            <Field
              label="Degraded above error rate"
              name="degraded_error_rate"
              type="number"
              defaultValue={current.degraded_error_rate}
            />
            <Field
              label="Failed above error rate"
              name="failed_error_rate"
              type="number"
              defaultValue={current.failed_error_rate}
            />
            <Field
              label="Failed after consecutive failures"
              name="consecutive_failures"
              type="number"
              defaultValue={current.consecutive_failures}
            />
            <Field
              label="Requests before a verdict"
              name="min_samples"
              type="number"
              defaultValue={current.min_samples}
            />
          </Form>
        )
      }
    </QueryView>
  );
}

export default function Routing() {
  const health = useApiQuery<ProviderHealthReport[]>('/api/health/providers', { refetchInterval: 5_000 });
  return (
    <>
      <PageHeader title="Routing health" />
      <p className="muted">
        Failed targets are skipped while another can serve and probed until they recover; degraded ones get
        less traffic. Refreshed every 5 seconds.
      </p>
      <QueryView query={health}>
        {(providers) => (
          <Table
            caption="Health of providers, keys and models"
            rows={rowsOf(providers)}
            rowKey={(row) => `${row.level}:${row.name}`}
            empty="No provider has served a request yet."
            columns={columns}
          />
        )}
      </QueryView>
      <BalancerSettings />
    </>
  );
}
