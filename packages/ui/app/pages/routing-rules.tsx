// Routing rules: one table per scope, in the order a request evaluates them (virtual key, team, customer, global,
// each by ascending priority, then the older rule), each rule turned on or off in place and moved up or down
// (which rewrites priorities), made and edited by form or JSON; and a dry run of a described request.
import type { ProviderView, RoutingRule, RoutingRuleInput } from '@gw/admin/api-types';
import { useState } from 'react';
import { api } from '../api.ts';
import { useAuth } from '../auth.tsx';
import {
  ErrorMessage,
  FormTabs,
  JsonForm,
  PageHeader,
  QueryView,
  Table,
  useApiMutation,
  useApiQuery,
} from '../ui.tsx';
import { DryRun } from './routing-dry-run.tsx';
import { RULE_TEMPLATE, RuleForm, SCOPES, type Scope, useScopeOwners } from './routing-rule-form.tsx';

const COLLECTION = '/api/governance/routing-rules';
const pathOf = (id: string) => `${COLLECTION}/${encodeURIComponent(id)}`;

/** The order the API evaluates a scope's rules in: the scope's owner, then priority, then the older first. */
const byEvaluation = (left: RoutingRule, right: RoutingRule) =>
  (left.scope_id ?? '').localeCompare(right.scope_id ?? '') ||
  left.priority - right.priority ||
  left.created_at.localeCompare(right.created_at);

/** The rules evaluated together: one scope, one owner. */
const sameGroup = (left: RoutingRule, right: RoutingRule) =>
  left.scope === right.scope && (left.scope_id ?? '') === (right.scope_id ?? '');

/**
 * The priorities a move changes: the group's rule swapped with its neighbour, the group's priorities kept as
 * they are when they differ (a swap of two values, gaps kept), else renumbered from 0.
 */
function priorityChanges(
  group: RoutingRule[],
  index: number,
  offset: -1 | 1,
): { id: string; priority: number }[] {
  const order = [...group];
  const [moved] = order.splice(index, 1);
  if (!moved) return [];
  order.splice(index + offset, 0, moved);
  const slots = group.map((rule) => rule.priority);
  const distinct = new Set(slots).size === slots.length;
  return order
    .map((rule, position) => ({ id: rule.id, priority: distinct ? slots[position]! : position }))
    .filter((change, position) => change.priority !== order[position]!.priority);
}

/** The editable fields of a stored rule: what a PUT of the JSON form starts from. */
function editable(rule: RoutingRule): RoutingRuleInput {
  const { id: _id, created_at: _created, updated_at: _updated, ...input } = rule;
  return input;
}

type Editing = { kind: 'create' } | { kind: 'edit'; rule: RoutingRule };

function RuleEditor(props: { editing: Editing; providers: string[]; onDone: () => void }) {
  const rule = props.editing.kind === 'edit' ? props.editing.rule : undefined;
  const save = useApiMutation(
    (body: unknown) =>
      rule
        ? api<RoutingRule>(pathOf(rule.id), { method: 'PUT', body })
        : api<RoutingRule>(COLLECTION, { method: 'POST', body }),
    [COLLECTION],
  );
  const submit = async (body: unknown) => {
    await save.mutateAsync(body);
    props.onDone();
  };
  const label = rule ? `Edit rule ${rule.name}` : 'New routing rule';
  return (
    <FormTabs
      label={label}
      form={<RuleForm item={rule} providers={props.providers} submit={submit} cancel={props.onDone} />}
      json={
        <JsonForm
          label={label}
          submit={rule ? 'Save' : 'Create'}
          initial={rule ? editable(rule) : RULE_TEMPLATE}
          onSubmit={submit}
          onCancel={props.onDone}
        />
      }
    />
  );
}

function ScopeTable(props: {
  scope: Scope;
  label: string;
  rules: RoutingRule[];
  owners: Map<string, { name: string }>;
  writable: boolean;
  onEdit: (rule: RoutingRule) => void;
  onToggle: (rule: RoutingRule) => void;
  onMove: (rule: RoutingRule, offset: -1 | 1) => void;
  onDelete: (rule: RoutingRule) => void;
}) {
  const group = (rule: RoutingRule) => props.rules.filter((other) => sameGroup(rule, other));
  const place = (rule: RoutingRule) => group(rule).findIndex((other) => other.id === rule.id);
  const heading = `${props.label} rules`;
  return (
    <section aria-labelledby={`scope-${props.scope}`} data-testid={`scope-${props.scope}`}>
      <h2 id={`scope-${props.scope}`}>{heading}</h2>
      <Table
        caption={heading}
        rows={props.rules}
        rowKey={(rule) => rule.id}
        empty={`No ${props.label.toLowerCase()} rules.`}
        columns={[
          { header: 'Priority', cell: (rule) => rule.priority },
          {
            header: 'Rule',
            cell: (rule) => (
              <>
                <strong>{rule.name}</strong>
                {rule.description && <div className="muted">{rule.description}</div>}
              </>
            ),
          },
          ...(props.scope === 'global'
            ? []
            : [
                {
                  header: 'Applies to',
                  cell: (rule: RoutingRule) => {
                    const name = props.owners.get(rule.scope_id ?? '')?.name;
                    return name ? `${name} (${rule.scope_id})` : (rule.scope_id ?? '—');
                  },
                },
              ]),
          { header: 'When', cell: (rule) => <code className="expression">{rule.cel_expression}</code> },
          {
            header: 'Targets',
            cell: (rule) =>
              [
                ...rule.targets.map((target) => `${target.provider}/${target.model} (×${target.weight})`),
                ...rule.fallbacks.map((model) => `then ${model}`),
              ].join(', '),
          },
          {
            header: 'Strategy',
            cell: (rule) =>
              [
                rule.strategy,
                rule.objective?.max_ttft_p95_ms && `ttft p95 ≤ ${rule.objective.max_ttft_p95_ms} ms`,
                rule.objective?.max_latency_p95_ms && `latency p95 ≤ ${rule.objective.max_latency_p95_ms} ms`,
              ]
                .filter(Boolean)
                .join(', '),
          },
          {
            header: 'Enabled',
            cell: (rule) =>
              props.writable ? (
                <input
                  type="checkbox"
                  checked={rule.enabled}
                  aria-label={`Enabled: ${rule.name}`}
                  onChange={() => props.onToggle(rule)}
                />
              ) : rule.enabled ? (
                'yes'
              ) : (
                'no'
              ),
          },
          ...(props.writable
            ? [
                {
                  header: 'Actions',
                  cell: (rule: RoutingRule) => (
                    <div className="actions">
                      <button
                        type="button"
                        className="secondary"
                        disabled={place(rule) === 0}
                        onClick={() => props.onMove(rule, -1)}
                      >
                        Up<span className="sr-only"> {rule.name}</span>
                      </button>
                      <button
                        type="button"
                        className="secondary"
                        disabled={place(rule) === group(rule).length - 1}
                        onClick={() => props.onMove(rule, 1)}
                      >
                        Down<span className="sr-only"> {rule.name}</span>
                      </button>
                      <button type="button" className="secondary" onClick={() => props.onEdit(rule)}>
                        Edit<span className="sr-only"> {rule.name}</span>
                      </button>
                      <button type="button" className="danger" onClick={() => props.onDelete(rule)}>
                        Delete<span className="sr-only"> {rule.name}</span>
                      </button>
                    </div>
                  ),
                },
              ]
            : []),
        ]}
      />
    </section>
  );
}

export default function RoutingRules() {
  const { can } = useAuth();
  const writable = can('routing:write');
  const rules = useApiQuery<RoutingRule[]>(COLLECTION);
  const providers = useApiQuery<ProviderView[]>(can('providers:read') ? '/api/providers' : undefined);
  const owners = useScopeOwners();
  const [editing, setEditing] = useState<Editing>();
  const patch = useApiMutation(
    async (changes: { id: string; body: Partial<RoutingRuleInput> }[]) => {
      // One after the other: a move's two priorities, each its own PATCH.
      for (const change of changes) await api(pathOf(change.id), { method: 'PATCH', body: change.body });
    },
    [COLLECTION],
  );
  const remove = useApiMutation((id: string) => api(pathOf(id), { method: 'DELETE' }), [COLLECTION]);
  return (
    <>
      <PageHeader title="Routing rules">
        {writable && (
          <button type="button" onClick={() => setEditing({ kind: 'create' })}>
            Add rule
          </button>
        )}
      </PageHeader>
      <p className="muted">
        A request is routed by the first rule that matches it: its virtual key’s rules first, then its team’s,
        its customer’s, and the global ones, each by ascending priority. A request no rule matches goes where
        it asked (or its model alias).
      </p>
      {editing && (
        <RuleEditor
          key={editing.kind === 'edit' ? editing.rule.id : 'create'}
          editing={editing}
          providers={(providers.data ?? []).map((provider) => provider.name)}
          onDone={() => setEditing(undefined)}
        />
      )}
      <ErrorMessage error={patch.error ?? remove.error} />
      <QueryView query={rules}>
        {(list) =>
          SCOPES.map(({ scope, label }) => {
            const scoped = list.filter((rule) => rule.scope === scope).sort(byEvaluation);
            return (
              <ScopeTable
                key={scope}
                scope={scope}
                label={label}
                rules={scoped}
                owners={owners}
                writable={writable}
                onEdit={(rule) => setEditing({ kind: 'edit', rule })}
                onToggle={(rule) => patch.mutate([{ id: rule.id, body: { enabled: !rule.enabled } }])}
                onMove={(rule, offset) => {
                  const group = scoped.filter((other) => sameGroup(rule, other));
                  const index = group.findIndex((other) => other.id === rule.id);
                  patch.mutate(
                    priorityChanges(group, index, offset).map(({ id, priority }) => ({
                      id,
                      body: { priority },
                    })),
                  );
                }}
                onDelete={(rule) => {
                  if (confirm(`Delete the rule ${rule.name}?`)) remove.mutate(rule.id);
                }}
              />
            );
          })
        }
      </QueryView>
      <DryRun />
    </>
  );
}
