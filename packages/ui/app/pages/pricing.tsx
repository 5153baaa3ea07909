// Pricing as `/api/pricing` shows it: every model's price in force, built in (with the provider's page and the
// day it was checked) or the operator's override; overrides are set, changed and deleted here, and so is the
// price of models without one. Every process applies a change to its next request. Only a role that holds
// `pricing:write` (Admin) sees the forms; what each model served has cost over 30 days comes from the request log.
import type {
  BuiltInPrice,
  LogStats,
  LogStatsBucket,
  ModelPrice,
  PricingView,
  ProviderView,
} from '@gw/admin/api-types';
import { useState } from 'react';
import { useSearchParams } from 'react-router';
import { api } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { formatCount, formatUsd } from '../format.ts';
import { modelPath, PRICING } from '../price-links.tsx';
import { Field, Form, PageHeader, QueryView, Table, useApiMutation, useApiQuery } from '../ui.tsx';
import { PriceForm, type PriceStart } from './price-form.tsx';

/** A model's buckets summed over the range. */
type ModelCost = Pick<LogStatsBucket, 'group' | 'count' | 'input_tokens' | 'output_tokens' | 'cost'>;

/** A row of the prices table: the price in force, and the built-in one an override replaces. */
interface PriceRow {
  model: string;
  price: ModelPrice;
  from: 'override' | 'built_in';
  builtIn: BuiltInPrice | undefined;
}

const MONTH = 30 * 86_400_000;

const perMillion = (price: Pick<ModelPrice, 'input' | 'output'>) =>
  `${formatUsd(price.input)} in · ${formatUsd(price.output)} out`;

/**
 * What a price holds beyond its input, output and cache prices (its long-context tier first), in a few words, in
 * one column: the table of every model stays short on a phone, where each column is a line of each row.
 */
function otherPrices(price: ModelPrice): string {
  const parts = [
    price.above && `above ${formatCount(price.above.tokens)} tokens ${perMillion(price.above)}`,
    price.batch && `batch ${perMillion(price.batch)}`,
    price.image_input !== undefined && `image in ${formatUsd(price.image_input)}`,
    price.image_output !== undefined && `image out ${formatUsd(price.image_output)}`,
    price.audio_input !== undefined && `audio in ${formatUsd(price.audio_input)}`,
    price.audio_output !== undefined && `audio out ${formatUsd(price.audio_output)}`,
    price.per_request !== undefined && `${formatUsd(price.per_request)} / request`,
    price.per_image !== undefined && `${formatUsd(price.per_image)} / image`,
    price.per_audio_second !== undefined && `${formatUsd(price.per_audio_second)} / audio second`,
    price.per_million_characters !== undefined &&
      `${formatUsd(price.per_million_characters)} / 1M characters`,
  ];
  return parts.filter(Boolean).join(' · ') || '—';
}

function UnpricedDefault(props: { price: PricingView['unpriced_model_price']; writable: boolean }) {
  const save = useApiMutation(
    (body: ModelPrice | undefined) =>
      api(`${PRICING}/unpriced`, body ? { method: 'PUT', body } : { method: 'DELETE' }),
    [PRICING],
  );
  const { price } = props;
  const state = (
    <p className="muted" data-testid="unpriced-state">
      {price
        ? `Charged ${formatUsd(price.input)} input and ${formatUsd(price.output)} output per million tokens.`
        : 'Refused under a budget (403 model_not_allowed) rather than served free.'}
    </p>
  );
  if (!props.writable) {
    return (
      <section className="panel" aria-labelledby="unpriced">
        <h2 id="unpriced">Models without a price</h2>
        {state}
        <p className="muted">Your role reads prices only.</p>
      </section>
    );
  }
  return (
    <Form
      label="Models without a price"
      submit="Save price"
      onSubmit={(values) => save.mutateAsync({ input: Number(values.input), output: Number(values.output) })}
    >
      {state}
      <Field
        label="Input (USD per million tokens)"
        name="input"
        type="number"
        required
        defaultValue={price?.input}
      />
      <Field
        label="Output (USD per million tokens)"
        name="output"
        type="number"
        required
        defaultValue={price?.output}
      />
      <p className="muted">Every process applies it to its next request.</p>
      {price && (
        <button type="button" className="secondary" onClick={() => save.mutate(undefined)}>
          Refuse unpriced models again
        </button>
      )}
    </Form>
  );
}

function Prices(props: { body: PricingView; writable: boolean; providers: string[] }) {
  // A model named in the address (`/pricing?model=…`, linked from a refusal for want of a price) opens the
  // form on it, and the list on its row.
  const [params, setParams] = useSearchParams();
  const [asked] = useState(() => params.get('model') ?? undefined);
  const [filter, setFilter] = useState(asked ?? '');
  const [editing, setEditing] = useState<PriceStart | undefined>(() =>
    asked
      ? { name: asked, price: props.body.effective.find((entry) => entry.model === asked)?.price }
      : undefined,
  );
  // A saved form starts empty again (a new form: its fields are uncontrolled).
  const [saves, setSaves] = useState(0);
  const remove = useApiMutation((model: string) => api(modelPath(model), { method: 'DELETE' }), [PRICING]);
  const builtIn = new Map(props.body.built_in.map((entry) => [entry.model, entry]));
  const rows: PriceRow[] = props.body.effective
    .filter((entry) => entry.model.toLowerCase().includes(filter.trim().toLowerCase()))
    .map((entry) => ({ ...entry, builtIn: builtIn.get(entry.model) }));
  const lists = [...new Map(props.body.built_in.map((entry) => [entry.provider, entry])).values()];
  return (
    <>
      {props.writable && (
        <PriceForm
          key={`${editing?.name ?? 'new'}-${saves}`}
          start={editing}
          models={props.body.effective.map((entry) => entry.model)}
          providers={props.providers}
          onDone={() => {
            setEditing(undefined);
            setSaves(saves + 1);
            if (params.has('model')) setParams({}, { replace: true });
          }}
        />
      )}
      <section aria-labelledby="prices">
        <h2 id="prices">Prices in force (USD per million tokens)</h2>
        <div className="field">
          <label htmlFor="price-filter">Find a model</label>
          <input
            id="price-filter"
            type="search"
            value={filter}
            onChange={(event) => setFilter(event.target.value)}
            autoComplete="off"
          />
        </div>
        {remove.error && (
          <p className="error" role="alert">
            {remove.error.message}
          </p>
        )}
        <Table
          caption="Prices in force"
          rows={rows}
          rowKey={(row) => row.model}
          empty="No model by that name: set its price above."
          columns={[
            { header: 'Model', cell: (row) => row.model },
            { header: 'Input', cell: (row) => formatUsd(row.price.input) },
            { header: 'Output', cell: (row) => formatUsd(row.price.output) },
            { header: 'Cached input', cell: (row) => formatUsd(row.price.cached_input) },
            { header: 'Cache write', cell: (row) => formatUsd(row.price.cache_write_input) },
            { header: 'Other prices', cell: (row) => otherPrices(row.price) },
            { header: 'Context window', cell: (row) => formatCount(row.price.context_window) },
            {
              header: 'Source',
              cell: (row) =>
                row.from === 'override' ? (
                  <span data-testid={`override-${row.model}`}>
                    Override{row.builtIn && ` (built in: ${perMillion(row.builtIn.price)})`}
                  </span>
                ) : (
                  `Built in (${row.builtIn?.provider ?? '—'}, ${row.builtIn?.as_of ?? '—'})`
                ),
            },
            ...(props.writable
              ? [
                  {
                    header: 'Actions',
                    cell: (row: PriceRow) => (
                      <div className="actions">
                        <button
                          type="button"
                          className="secondary"
                          onClick={() => setEditing({ name: row.model, price: row.price })}
                        >
                          {row.from === 'override' ? 'Edit' : 'Override'}
                          <span className="sr-only"> {row.model}</span>
                        </button>
                        {row.from === 'override' && (
                          <button
                            type="button"
                            className="secondary"
                            onClick={() => {
                              if (confirm(`Delete the price override of ${row.model}?`))
                                remove.mutate(row.model);
                            }}
                          >
                            {row.builtIn ? 'Back to built-in' : 'Delete'}
                            <span className="sr-only"> {row.model}</span>
                          </button>
                        )}
                      </div>
                    ),
                  },
                ]
              : []),
          ]}
        />
      </section>
      <section aria-labelledby="lists">
        <h2 id="lists">Built-in price lists</h2>
        <p className="muted">
          Each list is the provider's published price on the day it was last checked in gw; an override
          replaces a price that has changed since.
        </p>
        <Table
          caption="Built-in price lists"
          rows={lists}
          rowKey={(list) => list.provider}
          empty="No built-in prices."
          columns={[
            { header: 'Provider', cell: (list) => list.provider },
            { header: 'Source', cell: (list) => list.source },
            { header: 'As of', cell: (list) => list.as_of },
          ]}
        />
      </section>
    </>
  );
}

function ObservedPrices() {
  const [from] = useState(() => Date.now() - MONTH);
  const stats = useApiQuery<LogStats>('/api/logs/stats', {
    query: { from, bucket_ms: MONTH + 86_400_000, group_by: 'model' },
  });
  return (
    <QueryView query={stats}>
      {(body) => {
        const models = new Map<string, ModelCost>();
        for (const bucket of body.buckets) {
          const name = bucket.group ?? '—';
          const sum = models.get(name) ?? {
            group: name,
            count: 0,
            input_tokens: 0,
            output_tokens: 0,
            cost: 0,
          };
          sum.count += bucket.count;
          sum.input_tokens += bucket.input_tokens;
          sum.output_tokens += bucket.output_tokens;
          sum.cost += bucket.cost;
          models.set(name, sum);
        }
        return (
          <Table
            caption="Cost per model"
            rows={[...models.values()]}
            rowKey={(row) => String(row.group)}
            empty="No requests in the last 30 days."
            columns={[
              { header: 'Model', cell: (row) => String(row.group) },
              { header: 'Requests', cell: (row) => formatCount(row.count) },
              { header: 'Tokens', cell: (row) => formatCount(row.input_tokens + row.output_tokens) },
              { header: 'Cost', cell: (row) => formatUsd(row.cost) },
              {
                header: 'Per million tokens',
                cell: (row) => {
                  const tokens = row.input_tokens + row.output_tokens;
                  if (tokens === 0) return '—';
                  return row.cost === 0 ? (
                    <span className="bad">unpriced</span>
                  ) : (
                    formatUsd((row.cost / tokens) * 1e6)
                  );
                },
              },
            ]}
          />
        );
      }}
    </QueryView>
  );
}

export default function Pricing() {
  const { can } = useAuth();
  const pricing = useApiQuery<PricingView>(PRICING);
  const writable = can('pricing:write');
  const providers = useApiQuery<ProviderView[]>(
    writable && can('providers:read') ? '/api/providers' : undefined,
  );
  return (
    <>
      <PageHeader title="Pricing" />
      <QueryView query={pricing}>
        {(body) => (
          <>
            <UnpricedDefault price={body.unpriced_model_price} writable={writable} />
            <Prices
              body={body}
              writable={writable}
              providers={(providers.data ?? []).map((provider) => provider.name)}
            />
          </>
        )}
      </QueryView>
      {can('logs:read') && (
        <section aria-labelledby="observed">
          <h2 id="observed">What models cost (30 days)</h2>
          <ObservedPrices />
        </section>
      )}
    </>
  );
}
