// The first run, as steps: a provider, a tested key, a virtual key, then how to call gw with it. Shown on the
// pages where each step is taken until every step is done.
import type { ProviderView, VirtualKey } from '@gw/admin/api-types';
import { useSyncExternalStore } from 'react';
import { Link } from 'react-router';
import { useAuth } from './auth.tsx';
import { useApiQuery } from './ui.tsx';

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

export function FirstRun() {
  const { can } = useAuth();
  const providers = useApiQuery<ProviderView[]>(can('providers:read') ? '/api/providers' : undefined);
  const keys = useApiQuery<VirtualKey[]>(can('keys:read') ? '/api/governance/virtual-keys' : undefined);
  const tested = useSyncExternalStore(subscribeTested, keyTested);
  if (!providers.data || !keys.data) return null;
  const steps = [
    { done: providers.data.length > 0, text: 'Add a provider with its API key', to: '/providers' },
    {
      done: tested || keys.data.length > 0,
      text: 'Test its key (one real call)',
      to: '/providers',
    },
    { done: keys.data.length > 0, text: 'Create a virtual key for your apps', to: '/keys' },
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

/** How to call gw with a new key: curl and the OpenAI SDK, the key's value in both. */
export function KeySnippets({ value, model }: { value: string; model: string }) {
  const base = location.origin;
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
        OpenAI client works with the key as its API key.
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
          <button type="button" className="secondary" onClick={() => navigator.clipboard?.writeText(text!)}>
            Copy {label}
          </button>
        </figure>
      ))}
      <Link to="/playground" state={{ virtualKey: value, model }}>
        Try it in the playground
      </Link>
    </section>
  );
}
