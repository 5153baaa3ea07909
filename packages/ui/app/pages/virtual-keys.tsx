import type { CreatedVirtualKey, ProviderView, VirtualKey } from '@gw/admin/api-types';
import { useMemo, useState } from 'react';
import { api } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { BudgetBar, BudgetForm, Usage, useExhaustedIds } from '../budgets.tsx';
import { FirstRun, KeySnippets, PriceStep, unpricedOf } from '../first-run.tsx';
import { display, formatTime } from '../format.ts';
import {
  Field,
  Form,
  FormTabs,
  JsonForm,
  listOf,
  OnceValue,
  PageHeader,
  QueryView,
  Table,
  useApiMutation,
  useApiQuery,
} from '../ui.tsx';
import {
  EditKeyForm,
  LimitFields,
  limitsBody,
  OwnerFields,
  RoutingFields,
  routingBody,
} from './virtual-key-form.tsx';

const COLLECTION = '/api/governance/virtual-keys';
const pathOf = (id: string) => `${COLLECTION}/${encodeURIComponent(id)}`;

/** A key just made: its value (shown once) and how to call gw with it. */
interface Created {
  value: string;
  model: string;
}

/** A key's form, then (when nothing prices its model) the price step, then the key. */
function CreateKey({ onCreated, onCancel }: { onCreated: (created: Created) => void; onCancel: () => void }) {
  const { can } = useAuth();
  const providers = useApiQuery<ProviderView[]>('/api/providers');
  const create = useApiMutation(
    (body: unknown) => api<CreatedVirtualKey>(COLLECTION, { method: 'POST', body }),
    [COLLECTION],
  );
  // A key held back for the price step: its body, the model its snippets call, the models without a price.
  const [pending, setPending] = useState<{ body: unknown; model: string; unpriced: string[] }>();
  const createKey = async (body: unknown, model: string) =>
    onCreated({ value: (await create.mutateAsync(body)).value, model });
  return (
    <>
      {pending && (
        <PriceStep
          models={pending.unpriced}
          onDone={() => createKey(pending.body, pending.model)}
          onBack={() => setPending(undefined)}
        />
      )}
      {/* Kept while the price step shows, so that Back returns to the values typed. */}
      <div hidden={pending !== undefined}>
        <CreateKeyForm
          providers={providers.data ?? []}
          onCancel={onCancel}
          onSubmit={async ({ body, provider: chosen, models }) => {
            // The model its snippets call: the first one allowed by name, else one its provider's keys name.
            const provider = providers.data?.find((entry) => entry.name === chosen);
            const model =
              models.find((name) => name !== '*') ??
              provider?.keys?.flatMap((key) => key.models ?? []).find((name) => name !== '*') ??
              'gpt-4o-mini';
            const named = models.filter((name) => name !== '*');
            const unpriced = can('pricing:read') ? await unpricedOf(named.length ? named : [model]) : [];
            const called = chosen ? `${chosen}/${model}` : model;
            if (unpriced.length) setPending({ body, model: called, unpriced });
            else await createKey(body, called);
          }}
        />
      </div>
    </>
  );
}

/** The fields of a new key, as the API takes them, and the models it allows by name. */
function CreateKeyForm(props: {
  providers: ProviderView[];
  onSubmit: (key: { body: unknown; provider: string; models: string[] }) => Promise<void>;
  onCancel: () => void;
}) {
  return (
    <Form
      label="Create a virtual key"
      submit="Create key"
      onCancel={props.onCancel}
      onSubmit={async (values) => {
        const models = listOf(values.models);
        const budget = values.max_limit
          ? [{ max_limit: Number(values.max_limit), reset_duration: values.reset_duration || '1M' }]
          : [];
        await props.onSubmit({
          body: {
            name: values.name,
            provider_configs: values.provider
              ? [{ provider: values.provider, allowed_models: models.length ? models : ['*'] }]
              : [],
            ...(budget.length && { budgets: budget }),
            ...limitsBody(values, false),
            ...routingBody(values),
          },
          provider: values.provider ?? '',
          models,
        });
      }}
    >
      <Field label="Name" name="name" required />
      <Field
        label="Provider"
        name="provider"
        options={['', ...props.providers.map((provider) => provider.name)]}
        hint="A key without a provider allows nothing."
      />
      <Field
        label="Allowed models (comma-separated)"
        name="models"
        hint="Empty: every model of the provider."
      />
      <OwnerFields />
      <Field label="Budget (USD)" name="max_limit" type="number" hint="Optional." />
      <Field label="Budget resets every" name="reset_duration" defaultValue="1M" />
      <LimitFields />
      <RoutingFields />
    </Form>
  );
}

function EditKey({ virtualKey, onDone }: { virtualKey: VirtualKey; onDone: () => void }) {
  const patch = useApiMutation(
    (body: unknown) => api(pathOf(virtualKey.id), { method: 'PATCH', body }),
    [COLLECTION],
  );
  const submit = async (body: unknown) => {
    await patch.mutateAsync(body);
    onDone();
  };
  const { id: _id, value_hint: _hint, created_at: _created, ...editable } = virtualKey;
  return (
    <FormTabs
      label={`Edit ${virtualKey.name}`}
      form={<EditKeyForm virtualKey={virtualKey} onSubmit={submit} onCancel={onDone} />}
      json={
        <JsonForm
          label={`Edit ${virtualKey.name}`}
          submit="Save"
          initial={editable}
          onSubmit={submit}
          onCancel={onDone}
        />
      }
    />
  );
}

export default function VirtualKeys() {
  const { can } = useAuth();
  const writable = can('keys:write');
  const keys = useApiQuery<VirtualKey[]>(COLLECTION);
  const [creating, setCreating] = useState(false);
  const [once, setOnce] = useState<Created>();
  const [open, setOpen] = useState<{ id: string; what: 'usage' | 'budget' | 'edit' }>();
  const patch = useApiMutation(
    ({ id, body }: { id: string; body: unknown }) => api(pathOf(id), { method: 'PATCH', body }),
    [COLLECTION],
  );
  const rotate = useApiMutation(
    (id: string) => api<CreatedVirtualKey>(`${pathOf(id)}/rotate`, { method: 'POST' }),
    [COLLECTION],
  );
  const remove = useApiMutation((id: string) => api(pathOf(id), { method: 'DELETE' }), [COLLECTION]);
  const failure = patch.error ?? rotate.error ?? remove.error;
  const selected = keys.data?.find((key) => key.id === open?.id);
  const seesBudgets = can('budgets:read');
  const [overBudgetOnly, setOverBudgetOnly] = useState(false);
  // Keys with a budget, whose usage the bars read; the filter reads the same (cached) answers.
  const budgeted = useMemo(
    () =>
      new Map(
        seesBudgets
          ? (keys.data ?? []).filter((key) => key.budgets?.length).map((key) => [key.id, pathOf(key.id)])
          : [],
      ),
    [keys.data, seesBudgets],
  );
  const exhausted = useExhaustedIds(overBudgetOnly ? budgeted : new Map());
  return (
    <>
      <PageHeader title="Virtual keys">
        {writable && !creating && (
          <button type="button" onClick={() => setCreating(true)}>
            Create key
          </button>
        )}
      </PageHeader>
      <FirstRun />
      {once && (
        <>
          <OnceValue label="The new key" value={once.value} onDone={() => setOnce(undefined)} />
          {once.model && <KeySnippets value={once.value} model={once.model} />}
        </>
      )}
      {creating && (
        <CreateKey
          onCancel={() => setCreating(false)}
          onCreated={(created) => {
            setCreating(false);
            setOnce(created);
          }}
        />
      )}
      {failure && (
        <p className="error" role="alert">
          {failure.message}
        </p>
      )}
      {open && selected && (
        <section className="panel" aria-label={`Key ${selected.name}`}>
          {open.what === 'edit' ? (
            <EditKey virtualKey={selected} onDone={() => setOpen(undefined)} />
          ) : open.what === 'usage' ? (
            <>
              <h2>Usage of {selected.name}</h2>
              <Usage path={pathOf(selected.id)} />
              <button type="button" className="secondary" onClick={() => setOpen(undefined)}>
                Close
              </button>
            </>
          ) : (
            <BudgetForm
              path={pathOf(selected.id)}
              budgets={selected.budgets}
              invalidate={COLLECTION}
              onDone={() => setOpen(undefined)}
            />
          )}
        </section>
      )}
      {seesBudgets && (
        <label className="filter">
          <input
            type="checkbox"
            checked={overBudgetOnly}
            onChange={(event) => setOverBudgetOnly(event.target.checked)}
          />{' '}
          Over budget only
        </label>
      )}
      <QueryView query={keys}>
        {(rows) => (
          <Table
            caption="Virtual keys"
            rows={
              overBudgetOnly ? (exhausted ? rows.filter((key) => exhausted.has(key.id)) : undefined) : rows
            }
            rowKey={(key) => key.id}
            empty={
              overBudgetOnly
                ? 'No key has used up its budget.'
                : "No virtual keys yet. Create one: apps call gw with it instead of a provider's key."
            }
            columns={[
              { header: 'Name', cell: (key) => key.name },
              { header: 'Key', cell: (key) => <code>{display(key.value_hint)}</code> },
              { header: 'Team', cell: (key) => display(key.team_id) },
              {
                header: 'Providers',
                cell: (key) =>
                  (key.provider_configs ?? [])
                    .map((c) => `${c.provider}: ${(c.allowed_models ?? ['*']).join(', ')}`)
                    .join('; ') || 'none',
              },
              {
                header: 'Budget',
                cell: (key) =>
                  !key.budgets?.length && !key.rate_limit ? (
                    '—'
                  ) : seesBudgets ? (
                    <BudgetBar path={pathOf(key.id)} label={key.name} />
                  ) : (
                    (key.budgets ?? []).map((b) => `$${b.max_limit} / ${b.reset_duration}`).join(', ')
                  ),
              },
              { header: 'Active', cell: (key) => (key.is_active === false ? 'no' : 'yes') },
              { header: 'Expires', cell: (key) => formatTime(key.expires_at) },
              { header: 'Created', cell: (key) => formatTime(key.created_at) },
              {
                header: 'Actions',
                cell: (key) => (
                  <div className="actions">
                    {can('budgets:read') && (
                      <button
                        type="button"
                        className="secondary"
                        onClick={() => setOpen({ id: key.id, what: 'usage' })}
                      >
                        Usage<span className="sr-only"> of {key.name}</span>
                      </button>
                    )}
                    {writable && (
                      <>
                        <button
                          type="button"
                          className="secondary"
                          onClick={() => setOpen({ id: key.id, what: 'edit' })}
                        >
                          Edit<span className="sr-only"> {key.name}</span>
                        </button>
                        <button
                          type="button"
                          className="secondary"
                          onClick={() => setOpen({ id: key.id, what: 'budget' })}
                        >
                          Budget<span className="sr-only"> of {key.name}</span>
                        </button>
                        <button
                          type="button"
                          className="secondary"
                          onClick={async () => {
                            if (!confirm(`Rotate ${key.name}? The old value stops working now.`)) return;
                            setOnce({ value: (await rotate.mutateAsync(key.id)).value, model: '' });
                          }}
                        >
                          Rotate<span className="sr-only"> {key.name}</span>
                        </button>
                        <button
                          type="button"
                          className="secondary"
                          onClick={() =>
                            patch.mutate({ id: key.id, body: { is_active: key.is_active === false } })
                          }
                        >
                          {key.is_active === false ? 'Activate' : 'Deactivate'}
                          <span className="sr-only"> {key.name}</span>
                        </button>
                        <button
                          type="button"
                          className="danger"
                          onClick={() => {
                            if (confirm(`Delete ${key.name}?`)) remove.mutate(key.id);
                          }}
                        >
                          Delete<span className="sr-only"> {key.name}</span>
                        </button>
                      </>
                    )}
                  </div>
                ),
              },
            ]}
          />
        )}
      </QueryView>
    </>
  );
}
