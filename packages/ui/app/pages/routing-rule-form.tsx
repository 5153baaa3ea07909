// A routing rule's form: when (a CEL expression over the request), where (weighted targets, then fallbacks),
// how the first target is chosen (the strategy and its objective), and for whom (its scope and priority). The
// API compiles the expression: one that does not compile comes back with its line and column, shown under it.
import type {
  Customer,
  RoutingRule,
  RoutingRuleInput,
  RoutingStrategy,
  Team,
  VirtualKey,
} from '@gw/admin/api-types';
import { useAuth } from '../auth.tsx';
import { Rows, readRows } from '../rows.tsx';
import { Field, Form, type Option, useApiQuery } from '../ui.tsx';
import { objectiveOf, StrategyFields, strategyOf } from './strategy-fields.tsx';

export type Scope = RoutingRule['scope'];

/** The scopes in the order rules are evaluated: the most specific first. */
export const SCOPES: { scope: Scope; label: string }[] = [
  { scope: 'virtual_key', label: 'Virtual key' },
  { scope: 'team', label: 'Team' },
  { scope: 'customer', label: 'Customer' },
  { scope: 'global', label: 'Global' },
];

const isScope = (value: string | undefined): value is Scope => SCOPES.some((entry) => entry.scope === value);

/** The keys, teams and customers a rule may be scoped to, by id (those the caller may read). */
export function useScopeOwners(): Map<string, { scope: Scope; name: string }> {
  const { can } = useAuth();
  const keys = useApiQuery<VirtualKey[]>(can('keys:read') ? '/api/governance/virtual-keys' : undefined);
  const teams = useApiQuery<Team[]>(can('teams:read') ? '/api/governance/teams' : undefined);
  const customers = useApiQuery<Customer[]>(can('customers:read') ? '/api/governance/customers' : undefined);
  const owners = new Map<string, { scope: Scope; name: string }>();
  for (const [scope, list] of [
    ['virtual_key', keys.data],
    ['team', teams.data],
    ['customer', customers.data],
  ] as const)
    for (const owner of list ?? []) owners.set(owner.id, { scope, name: owner.name });
  return owners;
}

/** What an example rule looks like, for the JSON form's create. */
export const RULE_TEMPLATE = {
  name: 'long prompts to the large model',
  cel_expression: 'tokens > 8000',
  targets: [{ provider: 'openai', model: 'gpt-4o', weight: 1 }],
  fallbacks: [],
  strategy: 'weighted',
  scope: 'global',
  priority: 0,
} satisfies RoutingRuleInput;

/** The form's values as the API takes a whole rule (create, or PUT). */
function ruleBody(values: Record<string, string>): RoutingRuleInput {
  const scope = isScope(values.scope) ? values.scope : 'global';
  const objective = objectiveOf(values);
  const strategy: RoutingStrategy = strategyOf(values, 'strategy') ?? 'weighted';
  return {
    name: values.name ?? '',
    ...(values.description && { description: values.description }),
    enabled: values.enabled === 'yes',
    cel_expression: values.cel_expression ?? '',
    targets: readRows(values, 'targets').map((row) => ({
      provider: row.provider ?? '',
      model: row.model ?? '',
      weight: row.weight ? Number(row.weight) : 1,
    })),
    fallbacks: readRows(values, 'fallbacks').map((row) => row.model ?? ''),
    strategy,
    ...(objective && { objective }),
    scope,
    ...(scope !== 'global' && values.scope_id && { scope_id: values.scope_id }),
    priority: values.priority ? Number(values.priority) : 0,
  };
}

export function RuleForm(props: {
  item?: RoutingRule | undefined;
  /** Providers by name, to pick a target's from. */
  providers: string[];
  submit: (body: RoutingRuleInput) => Promise<void>;
  cancel: () => void;
}) {
  const owners = useScopeOwners();
  const rule = props.item;
  const scopeOptions: Option[] = [...owners].map(([id, owner]) => ({
    value: id,
    label: `${owner.scope.replace('_', ' ')}: ${owner.name}`,
  }));
  return (
    <Form
      label={rule ? `Edit rule ${rule.name}` : 'New routing rule'}
      submit={rule ? 'Save rule' : 'Create rule'}
      onCancel={props.cancel}
      onSubmit={(values) => props.submit(ruleBody(values))}
    >
      <Field label="Name" name="name" required defaultValue={rule?.name} />
      <Field label="Description" name="description" defaultValue={rule?.description} />
      <Field
        label="Enabled"
        name="enabled"
        options={['yes', 'no']}
        defaultValue={rule?.enabled === false ? 'no' : 'yes'}
      />
      <Field
        label="CEL expression"
        name="cel_expression"
        rows={3}
        required
        defaultValue={rule?.cel_expression}
        placeholder="tokens > 8000 && !stream"
        hint="Over model, provider, request_type, stream, params, headers, tokens, key, team, customer, user, usage, targets. `true` matches every request."
      />
      <Rows
        name="targets"
        legend="Targets"
        add="Add target"
        hint="The strategy picks the first among them (weighted: by weight); the others follow."
        fields={[
          { name: 'provider', label: 'Target provider', placeholder: 'openai', suggestions: props.providers },
          { name: 'model', label: 'Target model', placeholder: 'gpt-4o' },
          { name: 'weight', label: 'Target weight', type: 'number', placeholder: '1' },
        ]}
        initial={(rule?.targets ?? [{ provider: '', model: '', weight: 1 }]).map((target) => ({
          provider: target.provider,
          model: target.model,
          weight: String(target.weight),
        }))}
      />
      <Rows
        name="fallbacks"
        legend="Fallbacks"
        add="Add fallback"
        hint="Tried in order when every target fails: <provider>/<model>."
        fields={[{ name: 'model', label: 'Fallback', placeholder: 'anthropic/claude-haiku-4-5' }]}
        initial={(rule?.fallbacks ?? []).map((model) => ({ model }))}
      />
      <StrategyFields name="strategy" strategy={rule?.strategy ?? 'weighted'} objective={rule?.objective} />
      <Field
        label="Scope"
        name="scope"
        defaultValue={rule?.scope ?? 'global'}
        options={SCOPES.map(({ scope, label }) => ({ value: scope, label }))}
      />
      <Field
        label="Scope id"
        name="scope_id"
        defaultValue={rule?.scope_id}
        suggestions={scopeOptions}
        hint="The virtual key, team or customer the rule applies to; empty for a global rule."
      />
      <Field
        label="Priority"
        name="priority"
        type="number"
        defaultValue={rule?.priority ?? 0}
        hint="Within its scope, 0 is evaluated first; the first rule that matches wins."
      />
    </Form>
  );
}
