// The playground, a test bench: a chat sent through the gateway with a virtual key as an app sends it (its
// budgets, limits, guardrails and cache applying), with a system prompt, several turns, parameters and tools;
// what came back (playground-answer.tsx) links to its log record and copies as curl.
import type { ModelAlias, ProviderView } from '@gw/admin/api-types';
import { type FormEvent, useId, useState } from 'react';
import { useLocation } from 'react-router';
import { type ChatAnswer, type ChatRequest, CorsRefusal, curlOf, sendChat, type Turn } from '../gateway.ts';
import { ADDRESS_SOURCES, useGatewayAddress } from '../gateway-address.ts';
import { ErrorMessage, Field, PageHeader, useApiQuery } from '../ui.tsx';
import { CorsFix } from './cors-fix.tsx';
import { AnswerView } from './playground-answer.tsx';

/** Models to pick: every key's models of every provider (`provider/model`), and the gateway's aliases. */
function useModelSuggestions() {
  const providers = useApiQuery<ProviderView[]>('/api/providers');
  const aliases = useApiQuery<ModelAlias[]>('/api/governance/model-aliases');
  const models = (providers.data ?? []).flatMap((provider) =>
    (provider.keys ?? []).flatMap((key) =>
      (key.models ?? []).filter((m) => m !== '*').map((m) => `${provider.name}/${m}`),
    ),
  );
  return [
    ...[...new Set(models)].map((model) => ({ value: model, label: 'a provider’s model' })),
    ...(aliases.data ?? []).map((alias) => ({ value: alias.name, label: 'an alias' })),
  ];
}

/** The request the form describes, after the turns so far. */
function requestOf(values: Record<string, string>, turns: Turn[]): ChatRequest {
  const system = values.system?.trim();
  const tools = values.tools?.trim();
  let parsedTools: unknown[] | undefined;
  if (tools) {
    try {
      parsedTools = JSON.parse(tools) as unknown[];
    } catch (error) {
      throw new Error(`tools: not JSON: ${(error as Error).message}`);
    }
    if (!Array.isArray(parsedTools)) throw new Error('tools: must be a JSON list of tools');
  }
  return {
    model: values.model ?? '',
    stream: values.stream === 'on',
    messages: [
      ...(system ? [{ role: 'system' as const, content: system }] : []),
      ...turns,
      { role: 'user', content: values.prompt ?? '' },
    ],
    ...(values.temperature && { temperature: Number(values.temperature) }),
    ...(values.max_tokens && { max_tokens: Number(values.max_tokens) }),
    ...(parsedTools && { tools: parsedTools }),
  };
}

export default function Playground() {
  const given = (useLocation().state ?? {}) as { virtualKey?: string; model?: string };
  const models = useModelSuggestions();
  const promptId = useId();
  const [text, setText] = useState('');
  const [answer, setAnswer] = useState<ChatAnswer>();
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  /** The conversation so far (the system prompt apart): each question and the answer it got. */
  const [turns, setTurns] = useState<Turn[]>([]);
  /** The last question and its answer, until they join the conversation (or the next send replaces them). */
  const [exchange, setExchange] = useState<Turn[]>();
  const [curl, setCurl] = useState<string>();
  const known = useGatewayAddress();
  async function send(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const values = Object.fromEntries(new FormData(event.currentTarget)) as Record<string, string>;
    setBusy(true);
    setError(undefined);
    setAnswer(undefined);
    setExchange(undefined);
    setText('');
    try {
      const address = values.address || known?.address || location.origin;
      const request = requestOf(values, turns);
      setCurl(curlOf(address, values.virtual_key ?? '', request));
      const answered = await sendChat({
        address,
        virtualKey: values.virtual_key ?? '',
        request,
        onText: setText,
      });
      setAnswer(answered);
      setExchange(
        answered.status < 400
          ? [
              { role: 'user', content: values.prompt ?? '' },
              { role: 'assistant', content: answered.text },
            ]
          : undefined,
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
        and cache applying. "Continue this conversation" keeps an answer for the next message.
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
        <Field label="System prompt" name="system" rows={2} placeholder="You are a helpful assistant." />
        {turns.length > 0 && (
          <ol className="conversation plain" aria-label="Conversation so far">
            {turns.map((turn, index) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: turns have no id; their order is the conversation.
              <li key={index} className={`message message-${turn.role}`}>
                <span className="role-name">{turn.role}</span>
                <pre>{turn.content}</pre>
              </li>
            ))}
          </ol>
        )}
        <div className="field">
          <label htmlFor={promptId}>Message</label>
          <textarea id={promptId} name="prompt" rows={4} required defaultValue="Say hello" />
        </div>
        <details>
          <summary>Parameters and tools</summary>
          <Field label="Temperature" name="temperature" type="number" placeholder="the model's default" />
          <Field label="Max tokens" name="max_tokens" type="number" unit="tokens" />
          <Field
            label="Tools (JSON)"
            name="tools"
            rows={4}
            placeholder='[{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}]'
            hint="OpenAI function tools; the tools the model asks for are shown with the answer."
          />
        </details>
        <label>
          <input type="checkbox" name="stream" defaultChecked /> Stream the answer
        </label>
        <ErrorMessage error={error} />
        {error instanceof CorsRefusal && <CorsFix />}
        <div className="actions">
          <button type="submit" disabled={busy}>
            {busy ? 'Sending…' : 'Send'}
          </button>
          {exchange && (
            <button
              type="button"
              className="secondary"
              onClick={() => {
                setTurns([...turns, ...exchange]);
                setExchange(undefined);
              }}
            >
              Continue this conversation
            </button>
          )}
          {turns.length > 0 && (
            <button type="button" className="secondary" onClick={() => setTurns([])}>
              New conversation
            </button>
          )}
        </div>
      </form>
      <AnswerView answer={answer} text={text} curl={curl} />
    </>
  );
}
