import { useState } from 'react';
import { api } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { CrudSection } from '../crud.tsx';
import { display } from '../format.ts';
import { ErrorMessage, Field, Form, PageHeader, useApiMutation } from '../ui.tsx';

type Provider = Record<string, unknown> & {
  name?: string;
  keys?: { id?: string; value?: string; models?: string[]; weight?: number }[];
  network_config?: { base_url?: string };
};

const list = (values: string | undefined) =>
  (values ?? '')
    .split(',')
    .map((value) => value.trim())
    .filter(Boolean);

function AddProvider({ onDone }: { onDone: () => void }) {
  const create = useApiMutation(
    (body: unknown) => api('/api/providers', { method: 'POST', body }),
    ['/api/providers'],
  );
  return (
    <Form
      label="Add a provider"
      submit="Add provider"
      onCancel={onDone}
      onSubmit={async (values) => {
        const models = list(values.models);
        await create.mutateAsync({
          name: values.name,
          keys: [
            {
              id: values.key_id || 'key-1',
              value: values.key_value,
              ...(models.length > 0 && { models }),
            },
          ],
          ...(values.base_url && { network_config: { base_url: values.base_url } }),
        });
        onDone();
      }}
    >
      <Field
        label="Name"
        name="name"
        required
        placeholder="openai"
        hint="The provider gw routes to: openai, anthropic, azure, bedrock, gemini…"
      />
      <Field
        label="Base URL"
        name="base_url"
        type="url"
        placeholder="https://api.openai.com"
        hint="Leave empty for the provider's own."
      />
      <Field label="Key id" name="key_id" placeholder="key-1" />
      <Field
        label="Key value"
        name="key_value"
        type="password"
        required
        hint="Or env.NAME to read it from the environment."
      />
      <Field label="Models (comma-separated)" name="models" hint="Empty: every model." />
    </Form>
  );
}

interface KeyTest {
  ok: boolean;
  model: string;
  latency_ms: number;
  error?: { status: number; message: string };
}

/** `POST /api/providers/{name}/keys/{id}/test`: one real one-token call on the key, and what came of it. */
function TestKey({ provider, keyId, models }: { provider: string; keyId: string; models?: string[] }) {
  const [model, setModel] = useState(models?.find((name) => name !== '*') ?? '');
  const test = useApiMutation<KeyTest>(
    () =>
      api<KeyTest>(`/api/providers/${encodeURIComponent(provider)}/keys/${encodeURIComponent(keyId)}/test`, {
        method: 'POST',
        body: model ? { model } : {},
      }),
    [],
  );
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

export default function Providers() {
  const { can } = useAuth();
  const [adding, setAdding] = useState(false);
  return (
    <>
      <PageHeader title="Providers and keys">
        {can('providers:write') && !adding && (
          <button type="button" onClick={() => setAdding(true)}>
            Add provider
          </button>
        )}
      </PageHeader>
      {adding && <AddProvider onDone={() => setAdding(false)} />}
      <CrudSection
        title="Providers"
        listPath="/api/providers"
        itemPath={(name) => `/api/providers/${encodeURIComponent(name)}`}
        idOf={(item) => String(item.name)}
        writePermission="providers:write"
        editMethod="PATCH"
        editBody={(item) => {
          const { name: _name, ...rest } = item as Provider;
          return rest;
        }}
        columns={[
          { header: 'Name', cell: (item) => String(item.name) },
          { header: 'Base URL', cell: (item) => display((item as Provider).network_config?.base_url) },
          {
            header: 'Keys',
            cell: (item) => (
              <ul className="plain">
                {((item as Provider).keys ?? []).map((key) => (
                  <li key={key.id}>
                    {key.id}: <code>{display(key.value)}</code>
                    {key.models?.length ? ` (${key.models.join(', ')})` : ''}
                    {can('providers:write') && key.id && (
                      <TestKey provider={String(item.name)} keyId={key.id} models={key.models} />
                    )}
                  </li>
                ))}
              </ul>
            ),
          },
        ]}
      />
      <CrudSection
        title="Model aliases"
        listPath="/api/governance/model-aliases"
        itemPath={(id) => `/api/governance/model-aliases/${encodeURIComponent(id)}`}
        writePermission="providers:write"
        editMethod="PATCH"
        createTemplate={{
          name: 'fast',
          targets: [{ model: 'openai/gpt-4o-mini', weight: 1 }],
          fallbacks: [],
        }}
        columns={[
          { header: 'Id', cell: (item) => display(item.id) },
          { header: 'Name', cell: (item) => display(item.name) },
          { header: 'Targets', cell: (item) => display(item.targets) },
        ]}
      />
    </>
  );
}
