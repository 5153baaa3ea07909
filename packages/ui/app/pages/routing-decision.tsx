// A routing decision explained: the rule that matched (or none), the strategy, each candidate's score or why it
// was skipped, and the rules passed over with their errors. A request's log record and a dry run show the same.
import type { RoutingCandidate, RoutingDecision } from '@gw/admin/api-types';
import { display } from '../format.ts';
import { Table } from '../ui.tsx';

const SCOPE_NAMES: Record<NonNullable<RoutingDecision['rule']>['scope'], string> = {
  virtual_key: 'virtual key',
  team: 'team',
  customer: 'customer',
  global: 'global',
};

/** What a skip reason means, for the reader who has not read the docs. */
const SKIPS: Record<NonNullable<RoutingCandidate['skipped']>, string> = {
  boundary: 'outside the key’s providers and models',
  health: 'failed (health)',
  context_window: 'prompt beyond its context window',
  limits: 'no rate-limit headroom',
  objective: 'misses the objective',
};

export function RoutingDecisionView({ decision }: { decision: RoutingDecision }) {
  return (
    <div data-testid="routing-decision">
      <dl className="details">
        <div>
          <dt>Rule</dt>
          <dd data-testid="decision-rule">
            {decision.rule
              ? `${decision.rule.name} (${SCOPE_NAMES[decision.rule.scope]}, ${decision.rule.id})`
              : 'none matched'}
          </dd>
        </div>
        <div>
          <dt>Strategy</dt>
          <dd data-testid="decision-strategy">{decision.strategy}</dd>
        </div>
      </dl>
      <Table
        caption="Candidates"
        rows={decision.candidates.map((candidate, index) => ({ ...candidate, index }))}
        rowKey={(row) => String(row.index)}
        empty="No candidate."
        columns={[
          { header: '#', cell: (row) => row.index + 1 },
          { header: 'Candidate', cell: (row) => `${row.provider}/${row.model}` },
          { header: 'Score', cell: (row) => (row.score === undefined ? '—' : row.score.toPrecision(4)) },
          { header: 'State', cell: (row) => display(row.state) },
          {
            header: 'Skipped',
            cell: (row) =>
              row.skipped ? <span className="bad">{`${row.skipped}: ${SKIPS[row.skipped]}`}</span> : '—',
          },
          { header: 'Detail', cell: (row) => display(row.detail) },
        ]}
      />
      {decision.skipped_rules.length > 0 && (
        <>
          <h3>Rules passed over</h3>
          <ul className="plain" data-testid="skipped-rules">
            {decision.skipped_rules.map((rule) => (
              <li key={rule.id}>
                <strong>{rule.name}</strong> ({rule.id}):{' '}
                {rule.reason === 'error'
                  ? `failed to evaluate${rule.error ? `: ${rule.error}` : ''}`
                  : 'matched, but its targets are outside the key’s providers and models'}
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}
