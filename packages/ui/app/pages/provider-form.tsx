// The provider forms: add one (network settings and its first key), and change one (network settings, each
// key's weight and models, a key removed or added). What the form leaves out stays as stored (PATCH merges
// keys by id and a key sent without `value` keeps its secret).
import type { ProviderView } from '@gw/admin/api-types';
import { useState } from 'react';
import { useAuth } from '../auth.tsx';
import { CheckboxGroup, chosen } from '../choice-fields.tsx';
import { Field, Form, listOf } from '../ui.tsx';

const BUILT_IN = 'openai, anthropic, azure, bedrock, gemini, vertex, mistral, groq, cohere, ollama, sgl';

/** What a key value may be for this caller: references only with `secrets:reference` (the API refuses them otherwise). */
function useKeyValueHint(): string {
  const { can } = useAuth();
  return can('secrets:reference')
    ? "The provider's API key; or a reference gw resolves itself: env.NAME, vault.…, aws-sm.…"
    : "The provider's API key itself (references to the environment or a secret manager need Admin).";
}

/** The API names a key's fields `keys[i].value`…; the form's new key has its own names. */
const KEY_FIELDS = { value: 'key_value', id: 'key_id' };

function network(values: Record<string, string>) {
  return {
    base_url: values.base_url || null,
    ...(values.timeout_ms && { timeout_ms: Number(values.timeout_ms) }),
    ...(values.max_retries && { max_retries: Number(values.max_retries) }),
  };
}

function newKey(values: Record<string, string>) {
  const models = listOf(values.models);
  return {
    id: values.key_id || 'key-1',
    value: values.key_value,
    weight: values.weight === '' || values.weight === undefined ? 1 : Number(values.weight),
    ...(models.length > 0 && { models }),
  };
}

function NetworkFields({ provider, required }: { provider?: ProviderView | undefined; required?: boolean }) {
  const current = provider?.network_config;
  return (
    <fieldset>
      <legend>Network</legend>
      <Field
        label="Base URL"
        name="base_url"
        type="url"
        defaultValue={current?.base_url}
        placeholder="https://api.openai.com"
        required={required}
        hint={
          required
            ? 'Where the provider answers, without /v1 (gw adds /v1/chat/completions and the like): http://127.0.0.1:8000'
            : "Leave empty for the provider's own."
        }
      />
      <Field label="Timeout (ms)" name="timeout_ms" type="number" defaultValue={current?.timeout_ms} />
      <Field label="Retries" name="max_retries" type="number" defaultValue={current?.max_retries} />
    </fieldset>
  );
}

function NewKeyFields({ required, keyId }: { required: boolean; keyId: string }) {
  const hint = useKeyValueHint();
  return (
    <fieldset>
      <legend>{required ? 'Key' : 'Add a key'}</legend>
      <Field label="Key id" name="key_id" placeholder={keyId} />
      <Field label="Key value" name="key_value" type="password" required={required} hint={hint} />
      <Field
        label="Weight"
        name="weight"
        type="number"
        placeholder="1"
        hint="0 takes the key out of rotation."
      />
      <Field label="Models (comma-separated)" name="models" hint="Empty: every model." />
    </fieldset>
  );
}

type Custom = NonNullable<ProviderView['custom_provider_config']>;
/** The wire formats a custom provider speaks (a `Record` over the API's: a new one fails the typecheck here). */
const FORMATS: Record<Custom['base_provider'], string> = {
  openai: 'OpenAI-compatible (vLLM, LM Studio, Together, OpenRouter…)',
  anthropic: "Anthropic's Messages API",
  bedrock: 'AWS Bedrock',
  cohere: 'Cohere',
  gemini: 'Gemini',
};
const OPERATIONS: NonNullable<Custom['allowed_operations']> = [
  'chat',
  'chat_stream',
  'text',
  'text_stream',
  'embeddings',
];

/** A provider gw does not know by name, over a wire format it does: its format and what it may be asked. */
function CustomFields() {
  return (
    <fieldset>
      <legend>Custom provider</legend>
      <Field
        label="Speaks"
        name="base_provider"
        defaultValue="openai"
        options={(Object.keys(FORMATS) as Custom['base_provider'][]).map((format) => ({
          value: format,
          label: FORMATS[format],
        }))}
      />
      <CheckboxGroup
        legend="Operations it offers"
        name="operation"
        hint="None checked: all of them."
        choices={OPERATIONS.map((operation) => ({ value: operation, label: operation.replace('_', ' ') }))}
      />
    </fieldset>
  );
}

export function AddProviderForm(props: { onSubmit: (body: unknown) => Promise<void>; onCancel: () => void }) {
  const [custom, setCustom] = useState(false);
  return (
    <Form
      label="Add a provider"
      submit="Add provider"
      onCancel={props.onCancel}
      fieldNames={KEY_FIELDS}
      onSubmit={(values) => {
        const operations = chosen(values, 'operation') as NonNullable<Custom['allowed_operations']>;
        return props.onSubmit({
          name: values.name,
          keys: [newKey(values)],
          network_config: Object.fromEntries(Object.entries(network(values)).filter(([, v]) => v !== null)),
          ...(custom && {
            custom_provider_config: {
              base_provider: values.base_provider as Custom['base_provider'],
              ...(operations.length > 0 && { allowed_operations: operations }),
            } satisfies Custom,
          }),
        });
      }}
    >
      <div className="field">
        <label htmlFor="provider-kind">Kind</label>
        <select
          id="provider-kind"
          value={custom ? 'custom' : 'built-in'}
          onChange={(event) => setCustom(event.target.value === 'custom')}
        >
          <option value="built-in">built in (named below)</option>
          <option value="custom">custom: any name, over a wire format gw speaks</option>
        </select>
      </div>
      <Field
        label="Name"
        name="name"
        required
        placeholder={custom ? 'local-vllm' : 'openai'}
        hint={
          custom
            ? 'Lowercase letters, digits, - or _: requests name it as <name>/<model>.'
            : `Built in: ${BUILT_IN}.`
        }
      />
      {custom && <CustomFields />}
      <NewKeyFields required keyId="key-1" />
      <NetworkFields required={custom} />
    </Form>
  );
}

export function EditProviderForm(props: {
  provider: ProviderView;
  onSubmit: (body: unknown) => Promise<void>;
  onCancel: () => void;
}) {
  const keys = props.provider.keys ?? [];
  return (
    <Form
      label={`Edit ${props.provider.name}`}
      submit="Save provider"
      onCancel={props.onCancel}
      fieldNames={KEY_FIELDS}
      onSubmit={(values) =>
        props.onSubmit({
          network_config: network(values),
          keys: [
            ...keys.map((key) =>
              values[`remove:${key.id}`]
                ? { id: key.id, $patch: 'delete' }
                : {
                    id: key.id,
                    weight: Number(values[`weight:${key.id}`] ?? key.weight ?? 1),
                    models: listOf(values[`models:${key.id}`]),
                  },
            ),
            ...(values.key_value ? [newKey(values)] : []),
          ],
        })
      }
    >
      <NetworkFields provider={props.provider} />
      {keys.map((key) => (
        <fieldset key={key.id}>
          <legend>
            Key {key.id} <code>{key.value}</code>
          </legend>
          <Field
            label={`Weight of ${key.id}`}
            name={`weight:${key.id}`}
            type="number"
            defaultValue={key.weight}
          />
          <Field
            label={`Models of ${key.id} (comma-separated)`}
            name={`models:${key.id}`}
            defaultValue={(key.models ?? []).join(', ')}
            hint="Empty: every model."
          />
          <label>
            <input type="checkbox" name={`remove:${key.id}`} /> Remove key {key.id}
          </label>
        </fieldset>
      ))}
      <NewKeyFields required={false} keyId={`key-${keys.length + 1}`} />
    </Form>
  );
}
