// The fields a virtual key's create and edit forms share (owner pickers, limits, expiry, routing, metadata), and
// the edit form: which providers and models the key may use, its limits, expiry, owners, how a bare model is
// routed among its providers, and the metadata routing rules read. Budgets have their own form.
import type { Customer, ProviderView, Team, VirtualKey } from '@gw/admin/api-types';
import { Field, Form, listOf, type Option, useApiQuery } from '../ui.tsx';
import { MetadataRows, metadataBody, metadataPatch } from './metadata-fields.tsx';
import { objectiveOf, StrategyFields, strategyOf, strategyPatch } from './strategy-fields.tsx';

/** Ids of a governance collection with their names, to pick from. */
export function useOwnerOptions(collection: 'teams' | 'customers'): Option[] {
  const owners = useApiQuery<Array<Team | Customer>>(`/api/governance/${collection}`);
  return (owners.data ?? []).map((owner) => ({ value: owner.id, label: owner.name }));
}

export function OwnerFields({ current }: { current?: VirtualKey | undefined }) {
  const teams = useOwnerOptions('teams');
  const customers = useOwnerOptions('customers');
  return (
    <>
      <Field
        label="Team id"
        name="team_id"
        defaultValue={current?.team_id}
        suggestions={teams}
        hint={teams.length ? 'Pick a team, or leave empty.' : 'Optional; no teams yet (Teams & budgets).'}
      />
      <Field
        label="Customer id"
        name="customer_id"
        defaultValue={current?.customer_id}
        suggestions={customers}
      />
    </>
  );
}

export function LimitFields({ current }: { current?: VirtualKey | undefined }) {
  return (
    <>
      <Field
        label="Requests per minute"
        name="requests_per_minute"
        type="number"
        defaultValue={current?.rate_limit?.request_max_limit}
        hint="Optional rate limit."
      />
      <Field
        label="Tokens per minute"
        name="tokens_per_minute"
        type="number"
        defaultValue={current?.rate_limit?.token_max_limit}
        hint="Optional rate limit."
      />
      <Field
        label="Expires at"
        name="expires_at"
        type="datetime-local"
        defaultValue={current?.expires_at?.slice(0, 16)}
        hint="In your time zone; empty: never."
      />
    </>
  );
}

/** How a bare model is routed among the key's provider configs, and the labels rules read (`key.metadata`). */
export function RoutingFields({ current }: { current?: VirtualKey | undefined }) {
  return (
    <>
      <StrategyFields
        name="routing_strategy"
        strategy={current?.routing_strategy}
        objective={current?.routing_objective}
        unset="default (weighted)"
      />
      <MetadataRows current={current?.metadata} reads="key" />
    </>
  );
}

/** A create's routing fields: only those filled in. */
export function routingBody(values: Record<string, string>) {
  const strategy = strategyOf(values, 'routing_strategy');
  const objective = objectiveOf(values);
  return {
    ...(strategy && { routing_strategy: strategy }),
    ...(objective && { routing_objective: objective }),
    ...metadataBody(values),
  };
}

/** An edit's routing fields as a merge patch: emptied ones removed, a metadata entry no longer listed too. */
const routingPatch = (values: Record<string, string>, current: VirtualKey) => ({
  ...strategyPatch(values, { strategy: 'routing_strategy', objective: 'routing_objective' }),
  ...metadataPatch(values, current.metadata),
});

/** The owner, limit and expiry fields as the API takes them; `clear` sends null for an emptied field (PATCH). */
export function limitsBody(values: Record<string, string>, clear: boolean) {
  const absent = clear ? null : undefined;
  const rate = {
    ...(values.requests_per_minute && {
      request_max_limit: Number(values.requests_per_minute),
      request_reset_duration: '1m',
    }),
    ...(values.tokens_per_minute && {
      token_max_limit: Number(values.tokens_per_minute),
      token_reset_duration: '1m',
    }),
  };
  const body = {
    team_id: values.team_id || absent,
    customer_id: values.customer_id || absent,
    rate_limit: Object.keys(rate).length ? rate : absent,
    expires_at: values.expires_at ? new Date(values.expires_at).toISOString() : absent,
  };
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
}

export function EditKeyForm(props: {
  virtualKey: VirtualKey;
  onSubmit: (body: unknown) => Promise<void>;
  onCancel: () => void;
}) {
  const providers = useApiQuery<ProviderView[]>('/api/providers');
  const configs = new Map(
    (props.virtualKey.provider_configs ?? []).map((config) => [config.provider, config]),
  );
  const names = [...new Set([...(providers.data ?? []).map((provider) => provider.name), ...configs.keys()])];
  return (
    <Form
      label={`Edit ${props.virtualKey.name}`}
      submit="Save key"
      onCancel={props.onCancel}
      onSubmit={(values) =>
        props.onSubmit({
          name: values.name,
          provider_configs: names
            .filter((name) => values[`use:${name}`])
            .map((name) => {
              const models = listOf(values[`models:${name}`]);
              return { provider: name, allowed_models: models.length ? models : ['*'] };
            }),
          ...limitsBody(values, true),
          ...routingPatch(values, props.virtualKey),
        })
      }
    >
      <Field label="Name" name="name" required defaultValue={props.virtualKey.name} />
      <fieldset>
        <legend>Providers and models</legend>
        {names.map((name) => (
          <div key={name} className="field">
            <label>
              <input type="checkbox" name={`use:${name}`} defaultChecked={configs.has(name)} /> Use {name}
            </label>
            <Field
              label={`Models of ${name} (comma-separated)`}
              name={`models:${name}`}
              defaultValue={(configs.get(name)?.allowed_models ?? ['*']).join(', ')}
              hint="* allows every model."
            />
          </div>
        ))}
      </fieldset>
      <OwnerFields current={props.virtualKey} />
      <LimitFields current={props.virtualKey} />
      <RoutingFields current={props.virtualKey} />
    </Form>
  );
}
