// Budgets and limits of a governance resource (virtual key, team, customer, user, business unit): their current
// usage and reset times from `GET …/{id}/usage`, and a form that changes the first budget (PATCH `budgets`,
// keeping the budget's id so that what was spent stays); the bar of spend against the budget the tables show.
import type { BudgetInput, UsageEntry, UsageReport } from '@gw/admin/api-types';
import { type QueryKey, useQueries } from '@tanstack/react-query';
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
                {entry.kind === 'budget' && <BudgetMeter budget={entry} label={`Budget (${entry.scope})`} />}
                {entry.kind === 'budget'
                  ? `Budget ${formatUsd(entry.used)} of ${formatUsd(entry.max_limit)} per ${entry.reset_duration}`
                  : `${entry.kind.replace(/_/g, ' ')}: ${formatCount(entry.used)} of ${formatCount(entry.limit)}`}
                {entry.scope.startsWith('provider_config') ? ` (${entry.scope.split(':')[1]})` : ''}
                {entry.kind === 'budget' && isExhausted(entry) ? ', exhausted' : ''}, resets{' '}
                {formatTime(entry.resets_at)} (in {formatIn(entry.resets_at)})
              </li>
            ))}
          </ul>
        );
      }}
    </QueryView>
  );
}

/** The resource's own first budget (not a provider config's), as a usage report lists it. */
function ownBudget(report: UsageReport): Extract<UsageEntry, { kind: 'budget' }> | undefined {
  for (const section of report.usage) {
    if (section.scope.startsWith('provider_config')) continue;
    for (const entry of section.entries) if (entry.kind === 'budget') return entry;
  }
  return undefined;
}

const isExhausted = (entry: { used: number; max_limit: number }) => entry.used >= entry.max_limit;

/** "3 d 4 h", "12 min": how long until a time, in its two largest units. */
function formatIn(isoTime: string, now = Date.now()): string {
  // Down, so a period that just started reads 23 h 59 min, not 1 d.
  let rest = Math.max(0, Math.floor((Date.parse(isoTime) - now) / 60_000));
  const parts: string[] = [];
  for (const [unit, minutes] of [
    ['d', 1_440],
    ['h', 60],
    ['min', 1],
  ] as const) {
    if (rest >= minutes || (unit === 'min' && parts.length === 0)) {
      parts.push(`${Math.floor(rest / minutes)} ${unit}`);
      rest %= minutes;
    }
  }
  return parts.slice(0, 2).join(' ');
}

/** Spend against a budget: amber past 80 %, red once used up (Chromium colours a value past `high` red when `optimum` is low). */
function BudgetMeter({ budget, label }: { budget: { used: number; max_limit: number }; label: string }) {
  return (
    <meter
      min={0}
      max={budget.max_limit}
      value={Math.min(budget.used, budget.max_limit)}
      low={budget.max_limit * 0.8}
      high={budget.max_limit * 0.999}
      optimum={0}
      aria-label={label}
    />
  );
}

/**
 * A resource's spend against its first budget, as a bar: used of max, when it resets, "exhausted" once used
 * reaches the limit; its requests and tokens limits' use under it. Nothing when it has no budget or limit.
 */
export function BudgetBar({ path, label }: { path: string; label: string }) {
  const usage = useApiQuery<UsageReport>(`${path}/usage`, { refetchInterval: 30_000 });
  if (!usage.data) return <span className="muted">{usage.error ? 'usage unavailable' : '…'}</span>;
  const budget = ownBudget(usage.data);
  const limits = (usage.data.usage[0]?.entries ?? []).filter((entry) => entry.kind !== 'budget');
  if (!budget && limits.length === 0) return <span className="muted">—</span>;
  return (
    <div className="budget-bar" data-testid="budget-bar">
      {budget && (
        <>
          <BudgetMeter budget={budget} label={`Budget of ${label}`} />
          <span className={isExhausted(budget) ? 'error' : undefined}>
            {formatUsd(budget.used)} of {formatUsd(budget.max_limit)}
            {isExhausted(budget) ? ' · exhausted' : ''} · resets in {formatIn(budget.resets_at)}
          </span>
        </>
      )}
      {limits.map((entry) => (
        <span key={entry.kind} className="muted">
          {entry.kind}: {formatCount(entry.used)} of {formatCount(entry.limit)}, resets in{' '}
          {formatIn(entry.resets_at)}
        </span>
      ))}
    </div>
  );
}

/**
 * The ids, among those given, whose own budget is used up, from the same usage reads as their BudgetBars (one
 * cache entry per resource). Undefined while any is still being read.
 */
export function useExhaustedIds(paths: ReadonlyMap<string, string>): Set<string> | undefined {
  const reads = useQueries({
    queries: [...paths.values()].map((path) => ({
      queryKey: [`${path}/usage`, undefined] as QueryKey,
      queryFn: () => api<UsageReport>(`${path}/usage`),
      refetchInterval: 30_000,
    })),
  });
  if (reads.some((read) => read.data === undefined && !read.error)) return undefined;
  const ids = [...paths.keys()];
  return new Set(
    ids.filter((_, index) => {
      const budget = reads[index]?.data && ownBudget(reads[index].data);
      return budget !== undefined && isExhausted(budget);
    }),
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
