import { useState } from 'react';
import { api } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { BudgetForm, Usage } from '../budgets.tsx';
import { display, formatTime } from '../format.ts';
import { Field, Form, OnceValue, PageHeader, QueryView, Table, useApiMutation, useApiQuery } from '../ui.tsx';

interface VirtualKey {
  id: string;
  name: string;
  value_hint?: string;
  team_id?: string;
  is_active?: boolean;
  expires_at?: string;
  budgets?: { id?: string; max_limit: number; reset_duration: string }[];
  provider_configs?: { provider: string; allowed_models?: string[] }[];
  created_at?: string;
}

const COLLECTION = '/api/governance/virtual-keys';
const pathOf = (id: string) => `${COLLECTION}/${encodeURIComponent(id)}`;

function CreateKey({ onCreated, onCancel }: { onCreated: (value: string) => void; onCancel: () => void }) {
  const providers = useApiQuery<{ name: string }[]>('/api/providers');
  const create = useApiMutation(
    (body: unknown) => api<{ value: string }>(COLLECTION, { method: 'POST', body }),
    [COLLECTION],
  );
  return (
    <Form
      label="Create a virtual key"
      submit="Create key"
      onCancel={onCancel}
      onSubmit={async (values) => {
        const models = (values.models ?? '')
          .split(',')
          .map((m) => m.trim())
          .filter(Boolean);
        const budget = values.max_limit
          ? [{ max_limit: Number(values.max_limit), reset_duration: values.reset_duration || '1M' }]
          : [];
        const answer = await create.mutateAsync({
          name: values.name,
          ...(values.team_id && { team_id: values.team_id }),
          provider_configs: values.provider
            ? [{ provider: values.provider, allowed_models: models.length ? models : ['*'] }]
            : [],
          ...(budget.length && { budgets: budget }),
          ...(values.requests_per_minute && {
            rate_limit: {
              request_max_limit: Number(values.requests_per_minute),
              request_reset_duration: '1m',
            },
          }),
        });
        onCreated(answer.value);
      }}
    >
      <Field label="Name" name="name" required />
      <Field
        label="Provider"
        name="provider"
        options={['', ...(providers.data ?? []).map((provider) => provider.name)]}
        hint="A key without a provider allows nothing."
      />
      <Field
        label="Allowed models (comma-separated)"
        name="models"
        hint="Empty: every model of the provider."
      />
      <Field label="Team id" name="team_id" hint="Optional; the team must exist." />
      <Field label="Budget (USD)" name="max_limit" type="number" hint="Optional." />
      <Field label="Budget resets every" name="reset_duration" defaultValue="1M" />
      <Field
        label="Requests per minute"
        name="requests_per_minute"
        type="number"
        hint="Optional rate limit."
      />
    </Form>
  );
}

export default function VirtualKeys() {
  const { can } = useAuth();
  const writable = can('keys:write');
  const keys = useApiQuery<VirtualKey[]>(COLLECTION);
  const [creating, setCreating] = useState(false);
  const [once, setOnce] = useState<string>();
  const [open, setOpen] = useState<{ id: string; what: 'usage' | 'budget' }>();
  const patch = useApiMutation(
    ({ id, body }: { id: string; body: unknown }) => api(pathOf(id), { method: 'PATCH', body }),
    [COLLECTION],
  );
  const rotate = useApiMutation(
    (id: string) => api<{ value: string }>(`${pathOf(id)}/rotate`, { method: 'POST' }),
    [COLLECTION],
  );
  const remove = useApiMutation((id: string) => api(pathOf(id), { method: 'DELETE' }), [COLLECTION]);
  const failure = patch.error ?? rotate.error ?? remove.error;
  const selected = keys.data?.find((key) => key.id === open?.id);
  return (
    <>
      <PageHeader title="Virtual keys">
        {writable && !creating && (
          <button type="button" onClick={() => setCreating(true)}>
            Create key
          </button>
        )}
      </PageHeader>
      {once && <OnceValue label="The new key" value={once} onDone={() => setOnce(undefined)} />}
      {creating && (
        <CreateKey
          onCancel={() => setCreating(false)}
          onCreated={(value) => {
            setCreating(false);
            setOnce(value);
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
          {open.what === 'usage' ? (
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
      <QueryView query={keys}>
        {(rows) => (
          <Table
            caption="Virtual keys"
            rows={rows}
            rowKey={(key) => key.id}
            empty="No virtual keys yet."
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
                  key.budgets?.length
                    ? key.budgets.map((b) => `$${b.max_limit} / ${b.reset_duration}`).join(', ')
                    : '—',
              },
              { header: 'Active', cell: (key) => (key.is_active === false ? 'no' : 'yes') },
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
                          onClick={() => setOpen({ id: key.id, what: 'budget' })}
                        >
                          Budget<span className="sr-only"> of {key.name}</span>
                        </button>
                        <button
                          type="button"
                          className="secondary"
                          onClick={async () => {
                            if (!confirm(`Rotate ${key.name}? The old value stops working now.`)) return;
                            setOnce((await rotate.mutateAsync(key.id)).value);
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
