// The form that sets a model's whole price (`PUT /api/pricing/models/{model}`): every member a price can hold
// (token prices, per-unit prices, the context window, the long-context tier and batch prices), each number with
// its unit. A field left empty is left out of the body, so the price falls back as the schema says (a cached
// input to the input price, a tier's price within the tier, a per-unit price to free).
import type { ModelPrice, ModelPriceInput } from '@gw/admin/api-types';
import { type ReactNode, useState } from 'react';
import { api } from '../api.ts';
import { modelPath, PRICING } from '../price-links.tsx';
import { Field, Form, type Option, useApiMutation } from '../ui.tsx';

type TokenPrices = NonNullable<ModelPrice['batch']>;
type TokenPriceName = keyof TokenPrices;
type UnitPriceName = Extract<keyof ModelPrice, `per_${string}`>;

interface PriceField<Name extends string> {
  name: Name;
  label: string;
  unit: string;
  hint: string;
}

const PER_MILLION = 'USD / 1M tokens';

/** The prices every kind of token may have; the hints hold within a tier or a batch too (its own input price). */
const OPTIONAL_TOKEN_PRICES: PriceField<Exclude<TokenPriceName, 'input' | 'output'>>[] = [
  {
    name: 'cached_input',
    label: 'Cached input',
    unit: PER_MILLION,
    hint: "Prompt tokens served from the provider's cache; the input price when empty.",
  },
  {
    name: 'cache_write_input',
    label: 'Cache write',
    unit: PER_MILLION,
    hint: "Prompt tokens written to the provider's cache (Anthropic, Bedrock); the input price when empty.",
  },
  {
    name: 'cache_write_1h_input',
    label: 'Cache write for an hour',
    unit: PER_MILLION,
    hint: "Prompt tokens written to Anthropic's 1-hour cache; the cache-write price when empty.",
  },
  {
    name: 'audio_input',
    label: 'Audio input',
    unit: PER_MILLION,
    hint: 'Audio prompt tokens (OpenAI audio models); the input price when empty.',
  },
  {
    name: 'audio_output',
    label: 'Audio output',
    unit: PER_MILLION,
    hint: 'Audio completion tokens (OpenAI audio models); the output price when empty.',
  },
  {
    name: 'image_input',
    label: 'Image input',
    unit: PER_MILLION,
    hint: 'Image prompt tokens (OpenAI image models, Gemini image input); the input price when empty.',
  },
  {
    name: 'image_output',
    label: 'Image output',
    unit: PER_MILLION,
    hint: 'Image completion tokens (gpt-image-1, Gemini image models); the output price when empty.',
  },
];

/** What is billed beside tokens, in dollars per unit (per million characters alone per million). */
const UNIT_PRICES: PriceField<UnitPriceName>[] = [
  {
    name: 'per_request',
    label: 'Per request',
    unit: 'USD / request',
    hint: 'Every call answered (a search, a rerank, a flat-priced model), beside its tokens; free when empty.',
  },
  {
    name: 'per_image',
    label: 'Per image',
    unit: 'USD / image',
    hint: 'Each image made (DALL·E, Imagen), whatever its tokens; free when empty.',
  },
  {
    name: 'per_audio_second',
    label: 'Per second of audio',
    unit: 'USD / second',
    hint: 'Each second of audio transcribed or translated (whisper-1); free when empty.',
  },
  {
    name: 'per_million_characters',
    label: 'Per million characters',
    unit: 'USD / 1M characters',
    hint: 'Characters spoken (tts-1), as OpenAI lists it; free when empty.',
  },
];

/** A number field's value, or undefined when it was left empty. */
const numberOf = (text: string | undefined) => (text?.trim() ? Number(text) : undefined);

/** The fields filled in of `fields`, read under `prefix` (`above.`, `batch.`). */
function filled<Name extends string>(
  fields: PriceField<Name>[],
  values: Record<string, string>,
  prefix: string,
): Partial<Record<Name, number>> {
  const entries = fields.flatMap((field) => {
    const value = numberOf(values[prefix + field.name]);
    return value === undefined ? [] : [[field.name, value] as const];
  });
  return Object.fromEntries(entries) as Partial<Record<Name, number>>;
}

/** Token prices as the API takes them; input and output are required fields, so the form has them. */
const tokenPricesOf = (values: Record<string, string>, prefix: string): TokenPrices => ({
  input: Number(values[`${prefix}input`]),
  output: Number(values[`${prefix}output`]),
  ...filled(OPTIONAL_TOKEN_PRICES, values, prefix),
});

/** The PUT body of the form's values: the tier and the batch prices only when their section is there. */
function priceOf(values: Record<string, string>): ModelPriceInput {
  const contextWindow = numberOf(values.context_window);
  const tierTokens = Number(values['above.tokens']);
  return {
    ...tokenPricesOf(values, ''),
    ...filled(UNIT_PRICES, values, ''),
    ...(contextWindow !== undefined && { context_window: contextWindow }),
    ...('above.input' in values && { above: { tokens: tierTokens, ...tokenPricesOf(values, 'above.') } }),
    ...('batch.input' in values && { batch: tokenPricesOf(values, 'batch.') }),
  };
}

/**
 * A name `provider/model` whose first part is a configured provider is that provider's own price of the model;
 * any other name (`meta-llama/llama-3.1-8b` included) is the model's, whoever serves it.
 */
function scopeOf(name: string, providers: string[]): { provider: string; model: string } {
  const slash = name.indexOf('/');
  const provider = slash > 0 ? name.slice(0, slash) : '';
  return providers.includes(provider)
    ? { provider, model: name.slice(slash + 1) }
    : { provider: '', model: name };
}

/** Fields of token prices under `prefix`: input and output, then the rest folded away until one is set. */
function TokenPriceFields({ prefix, price }: { prefix: string; price: Partial<TokenPrices> | undefined }) {
  const opened = OPTIONAL_TOKEN_PRICES.some((field) => price?.[field.name] !== undefined);
  return (
    <>
      <Field
        label="Input"
        name={`${prefix}input`}
        type="number"
        unit={PER_MILLION}
        required
        defaultValue={price?.input}
        hint="Prompt tokens."
      />
      <Field
        label="Output"
        name={`${prefix}output`}
        type="number"
        unit={PER_MILLION}
        required
        defaultValue={price?.output}
        hint="Completion tokens, reasoning included."
      />
      <details open={opened}>
        <summary>Cache, audio and image tokens</summary>
        {OPTIONAL_TOKEN_PRICES.map((field) => (
          <Field
            key={field.name}
            {...field}
            name={prefix + field.name}
            type="number"
            defaultValue={price?.[field.name]}
          />
        ))}
      </details>
    </>
  );
}

/** A section the price may hold or not (the tier, the batch prices): added and removed with a button. */
function OptionalSection(props: {
  legend: string;
  add: string;
  present: boolean;
  onChange: (present: boolean) => void;
  children: ReactNode;
}) {
  if (!props.present) {
    return (
      <p>
        <button type="button" className="secondary" onClick={() => props.onChange(true)}>
          {props.add}
        </button>
      </p>
    );
  }
  return (
    <fieldset className="rows">
      <legend>{props.legend}</legend>
      {props.children}
      <button type="button" className="secondary" onClick={() => props.onChange(false)}>
        Remove {props.legend.toLowerCase()}
      </button>
    </fieldset>
  );
}

/** Where the form starts: a model's name (and its price, when it has one to start from). */
export interface PriceStart {
  name: string;
  price?: ModelPrice | undefined;
}

/** Sets a model's whole price; opened on a row (or for a model named in the address), it starts from it. */
export function PriceForm(props: {
  start: PriceStart | undefined;
  /** Names to suggest in the Model field. */
  models: string[];
  /** The configured providers, to scope a price to one of them. */
  providers: string[];
  onDone: () => void;
}) {
  const save = useApiMutation(
    ({ name, price }: { name: string; price: ModelPriceInput }) =>
      api(modelPath(name), { method: 'PUT', body: price }),
    [PRICING],
  );
  const price = props.start?.price;
  const [tier, setTier] = useState(Boolean(price?.above));
  const [batch, setBatch] = useState(Boolean(price?.batch));
  const scope = scopeOf(props.start?.name ?? '', props.providers);
  const scopes: Option[] = [
    { value: '', label: 'Every provider' },
    ...props.providers.map((provider) => ({ value: provider, label: `Only ${provider}` })),
  ];
  return (
    <Form
      label="Set a model's price"
      submit="Save model price"
      onCancel={props.start ? props.onDone : undefined}
      onSubmit={async (values) => {
        const model = values.model ?? '';
        await save.mutateAsync({
          name: values.provider ? `${values.provider}/${model}` : model,
          price: priceOf(values),
        });
        props.onDone();
      }}
    >
      <Field
        label="Model"
        name="model"
        required
        defaultValue={scope.model}
        placeholder="my-finetune"
        suggestions={props.models}
        hint="The name the provider answers with; dated and versioned names (gpt-4o-2024-08-06) take the price of their base name."
      />
      <Field
        label="Scope to provider"
        name="provider"
        options={scopes}
        defaultValue={scope.provider}
        hint="A price for one provider is kept as provider/model and applies only when that provider serves the model, before the model's own price."
      />
      <TokenPriceFields prefix="" price={price} />
      <details open={UNIT_PRICES.some((field) => price?.[field.name] !== undefined)}>
        <summary>Prices per request, image, second of audio or character</summary>
        {UNIT_PRICES.map((field) => (
          <Field key={field.name} {...field} type="number" defaultValue={price?.[field.name]} />
        ))}
      </details>
      <Field
        label="Context window"
        name="context_window"
        type="number"
        unit="tokens"
        defaultValue={price?.context_window}
        hint="Prompt and completion of one request; routing skips the model for a larger request. No limit when empty."
      />
      <OptionalSection
        legend="Long-context tier"
        add="Add a long-context tier"
        present={tier}
        onChange={setTier}
      >
        <p className="muted">
          A request whose prompt is longer than the threshold is priced wholly at these prices (Gemini 2.5 Pro
          above 200k tokens, Claude with the 1M context). A price left empty falls back within the tier.
        </p>
        <Field
          label="Above"
          name="above.tokens"
          type="number"
          unit="prompt tokens"
          required
          defaultValue={price?.above?.tokens}
          hint="Cache reads and writes count as prompt tokens."
        />
        <TokenPriceFields prefix="above." price={price?.above} />
      </OptionalSection>
      <OptionalSection legend="Batch prices" add="Add batch prices" present={batch} onChange={setBatch}>
        <p className="muted">
          Calls made through a provider's batch API (<code>/v1/batches</code>; OpenAI and Anthropic bill half
          the list price). Without them a batch's calls cost the prices above. A price left empty falls back
          within the batch prices.
        </p>
        <TokenPriceFields prefix="batch." price={price?.batch} />
      </OptionalSection>
    </Form>
  );
}
