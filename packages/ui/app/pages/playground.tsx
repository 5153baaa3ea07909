// A chat sent through the gateway with a virtual key, as an app sends it: streamed or not, with what gw says
// about the answer (cache, guardrails, the provider and model that served it, the request id).
import type { ModelAlias, ProviderView } from '@gw/admin/api-types';
import { type FormEvent, useId, useState } from 'react';
import { Link, useLocation } from 'react-router';
import { useAuth } from '../auth.tsx';
import { display } from '../format.ts';
import { type ChatAnswer, CorsRefusal, sendChat } from '../gateway.ts';
import { ADDRESS_SOURCES, useGatewayAddress } from '../gateway-address.ts';
import { UnpricedLink } from '../price-links.tsx';
import { ErrorMessage, Field, PageHeader, useApiQuery } from '../ui.tsx';

/** Models to suggest: every key's models of every provider, and the gateway's aliases. */
function useModelSuggestions(): string[] {
  const providers = useApiQuery<ProviderView[]>('/api/providers');
  const aliases = useApiQuery<ModelAlias[]>('/api/governance/model-aliases');
  const models = (providers.data ?? []).flatMap((provider) =>
    (provider.keys ?? []).flatMap((key) =>
      (key.models ?? []).filter((m) => m !== '*').map((m) => `${provider.name}/${m}`),
    ),
  );
  return [...new Set([...models, ...(aliases.data ?? []).map((alias) => alias.name)])];
}

function AnswerView({ answer, text }: { answer: ChatAnswer | undefined; text: string }) {
  const header = (name: string) => answer?.headers.find(([key]) => key === name)?.[1];
  return (
    <section aria-labelledby="answer">
      <h2 id="answer">Answer</h2>
      <div className="answer" data-testid="answer" aria-live="polite">
        {text}
      </div>
      {answer && (
        <dl className="details" data-testid="answer-facts">
          <dt>Status</dt>
          <dd className={answer.status >= 400 ? 'bad' : 'ok'}>{answer.status}</dd>
          <dt>Served by</dt>
          <dd>{[answer.extra.provider, answer.model].filter(Boolean).join(' · ') || '—'}</dd>
          <dt>Cache</dt>
          <dd>{display(header('x-gw-cache'))}</dd>
          <dt>Guardrails</dt>
          <dd>{display(answer.extra.guardrails ?? header('x-gw-guardrail-id'))}</dd>
          <dt>Request id</dt>
          <dd>{display(header('x-request-id'))}</dd>
          {answer.error && (
            <>
              <dt>Error</dt>
              <dd className="bad">
                {answer.error} <UnpricedLink error={answer.error} />
              </dd>
            </>
          )}
        </dl>
      )}
      {answer && answer.headers.length > 0 && (
        <>
          <h3>Headers</h3>
          <ul className="plain" data-testid="answer-headers">
            {answer.headers.map(([name, value]) => (
              <li key={name}>
                <code>
                  {name}: {value}
                </code>
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

export default function Playground() {
  const given = (useLocation().state ?? {}) as { virtualKey?: string; model?: string };
  const models = useModelSuggestions();
  const promptId = useId();
  const [text, setText] = useState('');
  const [answer, setAnswer] = useState<ChatAnswer>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const known = useGatewayAddress();
  const { can } = useAuth();
  async function send(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const values = Object.fromEntries(new FormData(event.currentTarget)) as Record<string, string>;
    setBusy(true);
    setError(undefined);
    setAnswer(undefined);
    setText('');
    try {
      setAnswer(
        await sendChat({
          address: values.address || known?.address || location.origin,
          virtualKey: values.virtual_key ?? '',
          model: values.model ?? '',
          prompt: values.prompt ?? '',
          stream: values.stream === 'on',
          onText: setText,
        }),
      );
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }
  return (
    <>
      <PageHeader title="Playground" />
      <p className="muted">
        Sends a chat through the gateway as an app does: with a virtual key, its budgets, limits, guardrails
        and cache applying.
      </p>
      <form className="panel" aria-label="Send a chat" onSubmit={send}>
        <Field
          key={known?.address}
          label="Gateway address"
          name="address"
          defaultValue={known?.address}
          hint={`Where apps reach gw's /v1: ${known ? ADDRESS_SOURCES[known.source] : 'finding it…'}.`}
        />
        <Field
          label="Virtual key"
          name="virtual_key"
          type="password"
          required
          defaultValue={given.virtualKey}
          hint="Its value (sk-gw-…): gw keeps only hashes, so paste it, or open this page from a new key."
        />
        <Field label="Model" name="model" required defaultValue={given.model} suggestions={models} />
        <div className="field">
          <label htmlFor={promptId}>Message</label>
          <textarea id={promptId} name="prompt" rows={4} required defaultValue="Say hello" />
        </div>
        <label>
          <input type="checkbox" name="stream" defaultChecked /> Stream the answer
        </label>
        <ErrorMessage error={error} />
        {error instanceof CorsRefusal && can('config:read') && (
          <p>
            <Link to="/config">Open System config (Client section)</Link>
          </p>
        )}
        <div className="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Sending…' : 'Send'}
          </button>
        </div>
      </form>
      <AnswerView answer={answer} text={text} />
    </>
  );
}
