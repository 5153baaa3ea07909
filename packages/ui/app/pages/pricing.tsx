// Pricing as the API shows it: the price of models without one (the unpriced default, a system setting), and
// what each model served has cost per million tokens over the last 30 days (the request log's stats). The
// built-in catalog and the file's `governance.pricing` overrides have no admin endpoint yet.
import type { LogStats, LogStatsBucket, SystemSettingsView } from '@gw/admin/api-types';
import { useState } from 'react';
import { api } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { formatCount, formatUsd } from '../format.ts';
import { Field, Form, PageHeader, QueryView, Table, useApiMutation, useApiQuery } from '../ui.tsx';

/** A model's buckets summed over the range. */
type ModelCost = Pick<LogStatsBucket, 'group' | 'count' | 'input_tokens' | 'output_tokens' | 'cost'>;

const MONTH = 30 * 86_400_000;

function UnpricedDefault() {
  const { can } = useAuth();
  const config = useApiQuery<SystemSettingsView>('/api/config');
  const save = useApiMutation(
    (body: unknown) => api('/api/config', { method: 'PUT', body }),
    ['/api/config'],
  );
  return (
    <QueryView query={config}>
      {(body) => {
        const price = body.governance.settings.unpriced_model_price;
        return (
          <Form
            label="Models without a price"
            submit="Save price"
            onSubmit={(values) =>
              save.mutateAsync({
                governance: {
                  settings: {
                    unpriced_model_price: { input: Number(values.input), output: Number(values.output) },
                  },
                },
              })
            }
          >
            <p className="muted" data-testid="unpriced-state">
              {price
                ? `Charged ${formatUsd(price.input)} input and ${formatUsd(price.output)} output per million tokens.`
                : 'Refused under a budget (403 model_not_allowed) rather than served free.'}
            </p>
            <Field
              label="Input (USD per million tokens)"
              name="input"
              type="number"
              required
              defaultValue={price?.input}
            />
            <Field
              label="Output (USD per million tokens)"
              name="output"
              type="number"
              required
              defaultValue={price?.output}
            />
            <p className="muted">Stored at once; each process applies it at its next start.</p>
            {!can('config:write') && <p className="muted">Your role reads this setting only.</p>}
          </Form>
        );
      }}
    </QueryView>
  );
}

function ObservedPrices() {
  const [from] = useState(() => Date.now() - MONTH);
  const stats = useApiQuery<LogStats>('/api/logs/stats', {
    query: { from, bucket_ms: MONTH + 86_400_000, group_by: 'model' },
  });
  return (
    <QueryView query={stats}>
      {(body) => {
        const models = new Map<string, ModelCost>();
        for (const bucket of body.buckets) {
          const name = bucket.group ?? '—';
          const sum = models.get(name) ?? {
            group: name,
            count: 0,
            input_tokens: 0,
            output_tokens: 0,
            cost: 0,
          };
          sum.count += bucket.count;
          sum.input_tokens += bucket.input_tokens;
          sum.output_tokens += bucket.output_tokens;
          sum.cost += bucket.cost;
          models.set(name, sum);
        }
        return (
          <Table
            caption="Cost per model"
            rows={[...models.values()]}
            rowKey={(row) => String(row.group)}
            empty="No requests in the last 30 days."
            columns={[
              { header: 'Model', cell: (row) => String(row.group) },
              { header: 'Requests', cell: (row) => formatCount(row.count) },
              { header: 'Tokens', cell: (row) => formatCount(row.input_tokens + row.output_tokens) },
              { header: 'Cost', cell: (row) => formatUsd(row.cost) },
              {
                header: 'Per million tokens',
                cell: (row) => {
                  const tokens = row.input_tokens + row.output_tokens;
                  if (tokens === 0) return '—';
                  return row.cost === 0 ? (
                    <span className="bad">unpriced</span>
                  ) : (
                    formatUsd((row.cost / tokens) * 1e6)
                  );
                },
              },
            ]}
          />
        );
      }}
    </QueryView>
  );
}

export default function Pricing() {
  const { can } = useAuth();
  return (
    <>
      <PageHeader title="Pricing" />
      {can('config:read') && <UnpricedDefault />}
      {can('logs:read') && (
        <section aria-labelledby="observed">
          <h2 id="observed">What models cost (30 days)</h2>
          <ObservedPrices />
        </section>
      )}
    </>
  );
}
