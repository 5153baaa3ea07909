import type { KeyTestResult, ProviderHealthReport, ProviderView } from '@gw/admin/api-types';
import { useState } from 'react';
import { api } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { CrudSection } from '../crud.tsx';
import { FirstRun, markKeyTested } from '../first-run.tsx';
import { display } from '../format.ts';
import { ErrorMessage, PageHeader, State, useApiMutation, useApiQuery } from '../ui.tsx';
import { ModelAliases } from './model-aliases.tsx';
import { AddProviderForm, EditProviderForm } from './provider-form.tsx';

/** `POST /api/providers/{name}/keys/{id}/test`: one real one-token call on the key, and what came of it. */
function TestKey({ provider, keyId, models }: { provider: string; keyId: string; models?: string[] }) {
  const [model, setModel] = useState(models?.find((name) => name !== '*') ?? '');
  const test = useApiMutation(async () => {
    const result = await api<KeyTestResult>(
      `/api/providers/${encodeURIComponent(provider)}/keys/${encodeURIComponent(keyId)}/test`,
      { method: 'POST', body: model ? { model } : {} },
    );
    if (result.ok) markKeyTested();
    return result;
  }, ['/api/providers']);
  const result = test.data;
  return (
    <span className="key-test">
      <input
        aria-label={`Model to test key ${keyId} with`}
        placeholder="model"
        value={model}
        onChange={(event) => setModel(event.target.value)}
        size={14}
      />
      <button type="button" onClick={() => test.mutate(undefined)} disabled={test.isPending}>
        {test.isPending ? 'Testing…' : 'Test'}
      </button>
      <span aria-live="polite">
        {result?.ok && ` works (${result.model}, ${result.latency_ms} ms)`}
        {result && !result.ok && ` failed: ${result.error?.status} ${result.error?.message}`}
      </span>
      <ErrorMessage error={test.error} />
    </span>
  );
}

/** Each provider's health state (healthy, degraded, failed, recovering), when the role reads health. */
function useHealthStates(): Map<string, string> {
  const { can } = useAuth();
  const health = useApiQuery<ProviderHealthReport[]>(
    can('health:read') ? '/api/health/providers' : undefined,
    { refetchInterval: 10_000 },
  );
  return new Map((health.data ?? []).map((row) => [row.provider, row.state]));
}

export default function Providers() {
  const { can } = useAuth();
  const [adding, setAdding] = useState(false);
  const states = useHealthStates();
  const create = useApiMutation(
    (body: unknown) => api('/api/providers', { method: 'POST', body }),
    ['/api/providers'],
  );
  return (
    <>
      <PageHeader title="Providers and keys">
        {can('providers:write') && !adding && (
          <button type="button" onClick={() => setAdding(true)}>
            Add provider
          </button>
        )}
      </PageHeader>
      <FirstRun />
      {adding && (
        <AddProviderForm
          onCancel={() => setAdding(false)}
          onSubmit={async (body) => {
            await create.mutateAsync(body);
            setAdding(false);
          }}
        />
      )}
      <CrudSection<ProviderView>
        title="Providers"
        listPath="/api/providers"
        itemPath={(name) => `/api/providers/${encodeURIComponent(name)}`}
        idOf={(item) => item.name}
        writePermission="providers:write"
        editMethod="PATCH"
        editBody={(item) => {
          const { name: _name, ...rest } = item;
          return rest;
        }}
        form={({ item, submit, cancel }) =>
          // Providers are added by AddProviderForm: this form only ever edits one.
          item && <EditProviderForm provider={item} onSubmit={submit} onCancel={cancel} />
        }
        empty="No providers yet. Add one with its API key, then test the key."
        columns={[
          { header: 'Name', cell: (item) => item.name },
          {
            header: 'State',
            cell: (item) => <State state={states.get(item.name) ?? 'unused'} />,
          },
          { header: 'Base URL', cell: (item) => display(item.network_config?.base_url) },
          {
            header: 'Keys',
            cell: (item) => (
              <ul className="plain">
                {(item.keys ?? []).map((key) => (
                  <li key={key.id}>
                    {key.id}: <code>{display(key.value)}</code> ×{key.weight ?? 1}
                    {key.models?.length ? ` (${key.models.join(', ')})` : ''}
                    {can('providers:write') && key.id && (
                      <TestKey provider={item.name} keyId={key.id} models={key.models} />
                    )}
                  </li>
                ))}
              </ul>
            ),
          },
        ]}
      />
      <ModelAliases />
    </>
  );
}
