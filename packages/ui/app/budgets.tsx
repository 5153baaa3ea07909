// Budgets and limits of a governance resource (virtual key, team, customer, user, business unit): their current
// usage and reset times from `GET …/{id}/usage`, and a form that changes the first budget (PATCH `budgets`,
// keeping the budget's id so that what was spent stays).
import type { BudgetInput, UsageReport } from '@gw/admin/api-types';
import { api } from './api.ts';
import { formatCount, formatTime, formatUsd } from './format.ts';
import { Field, Form, QueryView, useApiMutation, useApiQuery } from './ui.tsx';

export function Usage({ path }: { path: string }) {
  const usage = useApiQuery<UsageReport>(`${path}/usage`);
  return (
    <QueryView query={usage}>
      {(body) => {
        const entries = body.usage.flatMap((section) =>
          section.entries.map((entry) => ({ ...entry, scope: section.scope })),
        );
        if (entries.length === 0) return <p className="muted">No budgets or limits.</p>;
        return (
          <ul className="plain usage" data-testid="usage">
            {entries.map((entry) => (
              <li
                key={`${entry.scope}-${entry.kind}-${entry.resets_at}-${entry.kind === 'budget' ? entry.max_limit : entry.limit}`}
              >
                {entry.kind === 'budget'
                  ? `Budget ${formatUsd(entry.used)} of ${formatUsd(entry.max_limit)} per ${entry.reset_duration}`
                  : `${entry.kind.replace(/_/g, ' ')}: ${formatCount(entry.used)} of ${formatCount(entry.limit)}`}
                {entry.scope.startsWith('provider_config') ? ` (${entry.scope.split(':')[1]})` : ''}, resets{' '}
                {formatTime(entry.resets_at)}
              </li>
            ))}
          </ul>
        );
      }}
    </QueryView>
  );
}

export function BudgetForm(props: {
  path: string;
  budgets: BudgetInput[] | undefined;
  invalidate: string;
  onDone: () => void;
}) {
  const first = props.budgets?.[0];
  const change = useApiMutation(
    (body: unknown) => api(props.path, { method: 'PATCH', body }),
    [props.invalidate],
  );
  return (
    <Form
      label="Change the budget"
      submit="Save budget"
      onCancel={props.onDone}
      onSubmit={async (values) => {
        const maxLimit = Number(values.max_limit);
        if (!Number.isFinite(maxLimit) || maxLimit < 0)
          throw new Error('Max spend: must be a number of USD, 0 or more');
        const budget = {
          ...(first?.id && { id: first.id }),
          max_limit: maxLimit,
          reset_duration: values.reset_duration,
        };
        await change.mutateAsync({ budgets: [budget, ...(props.budgets?.slice(1) ?? [])] });
        props.onDone();
      }}
    >
      <Field
        label="Max spend (USD)"
        name="max_limit"
        type="number"
        required
        defaultValue={first?.max_limit}
      />
      <Field
        label="Resets every"
        name="reset_duration"
        required
        defaultValue={first?.reset_duration ?? '1M'}
        hint="A duration: 1h, 1d, 1w, 1M…"
      />
    </Form>
  );
}
