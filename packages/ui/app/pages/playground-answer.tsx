// What came back from a playground request: the text (or the tools the model asked for), what gw says of it
// (status, who served, cache, guardrails), the request id linking to its log record (routing decision, cost),
// the headers, and the request again as curl.
import type { LogRecord } from '@gw/admin/api-types';
import { Link } from 'react-router';
import { ApiError } from '../api.ts';
import { useAuth } from '../auth.tsx';
import { display, formatUsd } from '../format.ts';
import type { ChatAnswer } from '../gateway.ts';
import { UnpricedLink } from '../price-links.tsx';
import { CopyButton, useApiQuery } from '../ui.tsx';

/**
 * What the request's log record adds once it is written (a moment after the answer): how routing chose the
 * target (the rule, the strategy, the fallback that served) and what governance charged.
 */
function RecordFacts({ id }: { id: string }) {
  const record = useApiQuery<LogRecord>(`/api/logs/${encodeURIComponent(id)}`, {
    // The writer stores records within about a second: a 404 meanwhile is asked again.
    retry: (count, error) => error instanceof ApiError && error.status === 404 && count < 20,
    retryDelay: 500,
  });
  if (!record.data) return null;
  const { routing, fallback_index: fallback, cost } = record.data;
  return (
    <>
      <dt>Routing</dt>
      <dd data-testid="answer-routing">
        {routing
          ? `${routing.rule ? `rule ${routing.rule.name}` : 'no rule matched'}, ${routing.strategy}`
          : 'no routing decision'}
        {fallback !== null && fallback > 0 && `; served by fallback ${fallback}`}
      </dd>
      <dt>Cost</dt>
      <dd data-testid="answer-cost">{formatUsd(cost)}</dd>
    </>
  );
}

export function AnswerView(props: {
  answer: ChatAnswer | undefined;
  text: string;
  curl: string | undefined;
}) {
  const { answer } = props;
  const header = (name: string) => answer?.headers.find(([key]) => key === name)?.[1];
  const requestId = header('x-request-id');
  const { can } = useAuth();
  return (
    <section aria-labelledby="answer">
      <h2 id="answer">Answer</h2>
      <div className="answer" data-testid="answer" aria-live="polite">
        {props.text}
      </div>
      {answer && answer.toolCalls.length > 0 && (
        <ul className="plain" data-testid="answer-tool-calls">
          {answer.toolCalls.map((call, index) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: calls have no id of their own here.
            <li key={index} className="tool-call">
              calls <strong>{call.name}</strong>({call.arguments})
            </li>
          ))}
        </ul>
      )}
      {answer && (
        <dl className="details" data-testid="answer-facts">
          <dt>Status</dt>
          <dd className={answer.status >= 400 ? 'bad' : 'ok'}>{answer.status}</dd>
          <dt>Served by</dt>
          <dd>{[answer.extra.provider, answer.model].filter(Boolean).join(' · ') || '—'}</dd>
          <dt>Latency</dt>
          <dd>
            {typeof answer.extra.latency === 'number' ? `${Math.round(answer.extra.latency * 1000)} ms` : '—'}
          </dd>
          <dt>Cache</dt>
          <dd>{display(header('x-gw-cache'))}</dd>
          <dt>Guardrails</dt>
          <dd>{display(answer.extra.guardrails ?? header('x-gw-guardrail-id'))}</dd>
          {requestId && can('logs:read') && <RecordFacts id={requestId} />}
          <dt>Request id</dt>
          <dd>
            {requestId ? (
              <>
                <Link to={`/logs/${encodeURIComponent(requestId)}`} data-testid="answer-record">
                  {requestId}
                </Link>{' '}
                <span className="muted">(its log record: why it was routed there, and what it cost)</span>
              </>
            ) : (
              '—'
            )}
          </dd>
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
      {props.curl && (
        <div className="actions">
          <CopyButton text={props.curl} label="Copy as curl" />
        </div>
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
