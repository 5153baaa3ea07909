// The first run, as steps: a provider, a tested key, a virtual key (its model priced first when nothing prices
// it), then how to call gw with it. Shown on the pages where each step is taken until every step is done.
import type { LogPage, ModelPriceInput, ModelPricing, ProviderView, VirtualKey } from '@gw/admin/api-types';
import { useState, useSyncExternalStore } from 'react';
import { Link } from 'react-router';
import { api } from './api.ts';
import { useAuth } from './auth.tsx';
import { ADDRESS_SOURCES, useGatewayAddress } from './gateway-address.ts';
import { modelPath, PRICING, pricingPage } from './price-links.tsx';
import { CopyButton, ErrorMessage, Field, Form, Loading, useApiMutation, useApiQuery } from './ui.tsx';

const TESTED = 'gw.key-tested';

/** A key test that worked: the second step is done (kept for this tab). */
export function markKeyTested() {
  sessionStorage.setItem(TESTED, '1');
  window.dispatchEvent(new Event(TESTED));
}

function subscribeTested(changed: () => void) {
  window.addEventListener(TESTED, changed);
  return () => window.removeEventListener(TESTED, changed);
}

const keyTested = () => sessionStorage.getItem(TESTED) === '1';

/**
 * The first steps, each linked to where it is taken, until every one is done. `untilServed` (the landing page)
 * adds the last one: the gateway has served a request (any record of a 2xx answer in the request log).
 */
export function FirstRun({ untilServed = false }: { untilServed?: boolean }) {
  const { can } = useAuth();
  const providers = useApiQuery<ProviderView[]>(can('providers:read') ? '/api/providers' : undefined);
  const keys = useApiQuery<VirtualKey[]>(can('keys:read') ? '/api/governance/virtual-keys' : undefined);
  const served = useApiQuery<LogPage>(untilServed && can('logs:read') ? '/api/logs' : undefined, {
    query: { status_class: '2xx', limit: 1 },
  });
  const tested = useSyncExternalStore(subscribeTested, keyTested);
  if (!providers.data || !keys.data || (untilServed && !served.data)) return null;
  const steps = [
    { done: providers.data.length > 0, text: 'Add a provider with its API key', to: '/providers' },
    {
      done: tested || keys.data.length > 0,
      text: 'Test its key (one real call)',
      to: '/providers',
    },
    { done: keys.data.length > 0, text: 'Create a virtual key for your apps', to: '/keys' },
    ...(untilServed
      ? [
          {
            done: (served.data?.records.length ?? 0) > 0,
            text: 'Send a first request (the Playground, or the snippet shown with a new key)',
            to: '/playground',
          },
        ]
      : []),
  ];
  if (steps.every((step) => step.done)) return null;
  return (
    <section className="panel" aria-label="Getting started">
      <h2>Getting started</h2>
      <ol className="steps">
        {steps.map((step) => (
          <li key={step.text} className={step.done ? 'done' : undefined}>
            {step.done ? `${step.text}: done` : <Link to={step.to}>{step.text}</Link>}
          </li>
        ))}
      </ol>
    </section>
  );
}

/**
 * The models of `models` that nothing prices (no override, no built-in price, no unpriced default): under a
 * budget (the key's, its team's or its customer's) admission refuses them with 403 until they are priced.
 */
export async function unpricedOf(models: string[]): Promise<string[]> {
  const answers = await Promise.all(models.map((model) => api<ModelPricing>(modelPath(model))));
  return answers.filter((answer) => answer.effective === null).map((answer) => answer.model);
}

/**
 * The step between a new key's form and the key, when its models have no price: each one's input and output
 * price, set as an override before the key is made so that the key serves at once; or the key now and the price
 * later. A role that cannot set prices is told who can, and where.
 */
export function PriceStep(props: { models: string[]; onDone: () => Promise<unknown>; onBack: () => void }) {
  const { can } = useAuth();
  const save = useApiMutation(
    (prices: [string, ModelPriceInput][]) =>
      Promise.all(prices.map(([model, price]) => api(modelPath(model), { method: 'PUT', body: price }))),
    [PRICING],
  );
  // The key made without prices: a refusal of it shows here (the form shows its own submit's).
  const [failure, setFailure] = useState<unknown>();
  const createLater = () => {
    setFailure(undefined);
    props.onDone().catch(setFailure);
  };
  const named = props.models.join(', ');
  const later = (
    <p className="muted" data-testid="price-later">
      Price later: requests for {named} under a budget will be refused with 403 until{' '}
      {props.models.length > 1 ? 'they are' : 'it is'} priced, on the{' '}
      <Link to={pricingPage(props.models[0]!)}>Pricing page</Link>.
    </p>
  );
  if (!can('pricing:write')) {
    return (
      <section className="panel" aria-label="Price the key's models">
        <h2>No price for {named}</h2>
        <p>Your role cannot set prices: an Admin sets them on the Pricing page.</p>
        {later}
        <ErrorMessage error={failure} />
        <div className="actions">
          <button type="button" onClick={createLater}>
            Create the key anyway
          </button>
          <button type="button" className="secondary" onClick={props.onBack}>
            Back
          </button>
        </div>
      </section>
    );
  }
  return (
    <Form
      label="Price the key's models"
      submit="Save prices and create key"
      onCancel={props.onBack}
      onSubmit={async (values) => {
        await save.mutateAsync(
          props.models.map((model) => [
            model,
            { input: Number(values[`input:${model}`]), output: Number(values[`output:${model}`]) },
          ]),
        );
        await props.onDone();
      }}
    >
      <p>
        Nothing prices {named} yet (no built-in price, no override, no price for unpriced models). Set what
        the provider charges, so that the key's spend and budgets count it.
      </p>
      {props.models.map((model) => (
        <fieldset key={model} className="rows">
          <legend>{model}</legend>
          <Field label="Input" name={`input:${model}`} type="number" unit="USD / 1M tokens" required />
          <Field label="Output" name={`output:${model}`} type="number" unit="USD / 1M tokens" required />
        </fieldset>
      ))}
      {later}
      <ErrorMessage error={failure} />
      <button type="button" className="secondary" onClick={createLater}>
        Create the key, price later
      </button>
    </Form>
  );
}

/** How to call gw with a new key: curl and the OpenAI SDK, the key's value in both. */
export function KeySnippets({ value, model }: { value: string; model: string }) {
  const known = useGatewayAddress();
  if (!known) return <Loading what="Finding the gateway's address" />;
  const base = known.address;
  const curl = `curl ${base}/v1/chat/completions \\
  -H "Authorization: Bearer ${value}" \\
  -H "Content-Type: application/json" \\
  -d '{"model": "${model}", "messages": [{"role": "user", "content": "Hello"}]}'`;
  const sdk = `import OpenAI from 'openai';

const client = new OpenAI({ baseURL: '${base}/v1', apiKey: '${value}' });
const answer = await client.chat.completions.create({
  model: '${model}',
  messages: [{ role: 'user', content: 'Hello' }],
});
console.log(answer.choices[0].message.content);`;
  const python = `from openai import OpenAI

client = OpenAI(base_url="${base}/v1", api_key="${value}")
answer = client.chat.completions.create(
    model="${model}",
    messages=[{"role": "user", "content": "Hello"}],
)
print(answer.choices[0].message.content)`;
  return (
    <section className="panel" aria-label="Use the key">
      <h2>Use it</h2>
      <p className="muted">
        gw answers OpenAI's API at <code>{base}/v1</code> (and Anthropic's at <code>/anthropic</code>); any
        OpenAI client works with the key as its API key. The address is {ADDRESS_SOURCES[known.source]}.
      </p>
      {[
        ['curl', curl],
        ['JavaScript (openai)', sdk],
        ['Python (openai)', python],
      ].map(([label, text]) => (
        <figure key={label}>
          <figcaption>{label}</figcaption>
          <pre className="snippet" data-testid={`snippet-${label!.split(' ')[0]!.toLowerCase()}`}>
            {text}
          </pre>
          <CopyButton text={text!} label={`Copy ${label}`} />
        </figure>
      ))}
      <Link to="/playground" state={{ virtualKey: value, model }}>
        Try it in the playground
      </Link>
    </section>
  );
}
