// One request as the log keeps it: what went wrong (error, upstream status and body), the conversation with
// its tool calls, how it was routed (the rule and strategy that chose, each candidate's score or why it was
// skipped, targets tried, the fallback that served, the key), what it cost, and
// whom it was charged to or refused for.
import type { Customer, LogRecord, SystemSettingsView, Team, VirtualKey } from '@gw/admin/api-types';
import type { ReactNode } from 'react';
import { Link, useParams } from 'react-router';
import { useAuth } from '../auth.tsx';
import { display, formatMs, formatTime, formatTokens, formatUsd } from '../format.ts';
import { UnpricedLink } from '../price-links.tsx';
import { PageHeader, QueryView, Table, useApiQuery } from '../ui.tsx';
import { RoutingDecisionView } from './routing-decision.tsx';

interface ToolCall {
  id?: string;
  name: string;
  arguments: string;
}

interface Turn {
  role: string;
  text: string;
  toolCalls: ToolCall[];
  toolCallId?: string | undefined;
  /** A turn of the answer (not of the request it answered). */
  answer?: boolean;
}

function parseJson(text: string | null): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A message's content as text: a string, or the parts' text (other parts named by their type). */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return content == null ? '' : JSON.stringify(content);
  return content
    .map((part) => {
      if (!isObject(part)) return String(part);
      if (typeof part.text === 'string') return part.text;
      if (part.type === 'tool_result') return textOf(part.content);
      if (part.type === 'tool_use') return '';
      return `[${String(part.type ?? 'part')}]`;
    })
    .filter(Boolean)
    .join('\n');
}

/** Tool calls of an OpenAI message (`tool_calls`) or an Anthropic content list (`tool_use` blocks). */
function toolCallsOf(message: Record<string, unknown>): ToolCall[] {
  const calls: ToolCall[] = [];
  if (Array.isArray(message.tool_calls)) {
    for (const call of message.tool_calls) {
      if (!isObject(call) || !isObject(call.function)) continue;
      calls.push({
        id: typeof call.id === 'string' ? call.id : undefined,
        name: String(call.function.name ?? ''),
        arguments: String(call.function.arguments ?? ''),
      });
    }
  }
  if (Array.isArray(message.content)) {
    for (const block of message.content) {
      if (isObject(block) && block.type === 'tool_use')
        calls.push({
          id: typeof block.id === 'string' ? block.id : undefined,
          name: String(block.name ?? ''),
          arguments: JSON.stringify(block.input ?? {}),
        });
    }
  }
  return calls;
}

const turnOf = (message: Record<string, unknown>, role = String(message.role ?? 'message')): Turn => ({
  role,
  text: textOf(message.content),
  toolCalls: toolCallsOf(message),
  toolCallId: typeof message.tool_call_id === 'string' ? message.tool_call_id : undefined,
});

/** The request's turns: chat messages, a text prompt, or the texts to embed. */
function requestTurns(request: unknown): Turn[] | undefined {
  if (!isObject(request)) return undefined;
  if (Array.isArray(request.messages))
    return request.messages.filter(isObject).map((message) => turnOf(message));
  const prompt = request.prompt ?? request.input;
  if (prompt !== undefined)
    return [
      { role: 'user', text: Array.isArray(prompt) ? prompt.join('\n') : String(prompt), toolCalls: [] },
    ];
  return undefined;
}

/** The answer's turns: a chat completion's choices, an Anthropic message, or a stream's joined text. */
function answerTurns(text: string | null): Turn[] | undefined {
  if (!text) return undefined;
  const answer = parseJson(text);
  if (isObject(answer) && Array.isArray(answer.choices)) {
    return answer.choices
      .filter(isObject)
      .map((choice) =>
        isObject(choice.message)
          ? turnOf(choice.message, 'assistant')
          : { role: 'assistant', text: String(choice.text ?? ''), toolCalls: [] },
      );
  }
  if (isObject(answer) && Array.isArray(answer.content)) return [turnOf(answer, 'assistant')];
  return answer === undefined ? [{ role: 'assistant', text, toolCalls: [] }] : undefined;
}

function Conversation({ turns }: { turns: Turn[] }) {
  return (
    <ol className="conversation plain" aria-label="Conversation">
      {turns.map((turn, index) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: turns have no id; their order is the conversation.
        <li key={index} className={`message message-${turn.role}`}>
          <span className="role-name">
            {turn.role}
            {turn.toolCallId && ` · result of ${turn.toolCallId}`}
            {turn.answer && ' · the answer'}
          </span>
          {turn.text && <pre>{turn.text}</pre>}
          {turn.toolCalls.map((call, callIndex) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a call's id is optional.
            <div key={callIndex} className="tool-call" data-testid="tool-call">
              calls <strong>{call.name}</strong>({call.arguments}){call.id && ` · ${call.id}`}
            </div>
          ))}
        </li>
      ))}
    </ol>
  );
}

function Raw({ title, text }: { title: string; text: string | null }) {
  if (!text) return null;
  const parsed = parseJson(text);
  return (
    <details>
      <summary>{title}</summary>
      <pre className="content">{parsed === undefined ? text : JSON.stringify(parsed, null, 2)}</pre>
    </details>
  );
}

/**
 * Errors gw answers itself before routing (the request, the key, its limits, budgets and models, a guardrail on
 * the input): with no target tried, such a failure was a refusal whatever provider its message names.
 */
const REFUSALS = new Set([
  'invalid_request',
  'payload_too_large',
  'missing_required_header',
  'unknown_provider',
  'virtual_key_required',
  'virtual_key_invalid',
  'virtual_key_inactive',
  'virtual_key_expired',
  'provider_not_allowed',
  'model_not_allowed',
  'budget_exceeded',
  'token_limit_exceeded',
  'request_limit_exceeded',
  'guardrail_blocked',
]);

/** Refused by gw itself, decided from the error and the attempts: a refusal's type, and no target tried. */
const refusedBeforeRouting = (record: LogRecord) =>
  record.status >= 400 &&
  REFUSALS.has(record.error_type ?? '') &&
  (record.attempts ?? []).length === 0 &&
  record.fallback_index === null &&
  record.upstream_status === null;

/** Why a record holds no content: said from the setting, never guessed. */
function NoContent({ record }: { record: LogRecord }) {
  const { can } = useAuth();
  const refused = refusedBeforeRouting(record);
  const config = useApiQuery<SystemSettingsView>(can('config:read') ? '/api/config' : undefined);
  const key = useApiQuery<VirtualKey>(
    !refused && record.virtual_key_id && can('keys:read')
      ? `/api/governance/virtual-keys/${encodeURIComponent(record.virtual_key_id)}`
      : undefined,
  );
  const on = config.data?.logs?.content;
  const name = record.virtual_key_name ?? record.virtual_key_id;
  let why: string;
  if (refused)
    why = 'Refused before routing: nothing was sent to a provider, and no content is kept for a refusal.';
  else if (on === false) why = 'Content logging is off (logs.content in System config).';
  else if (key.data?.log_content === false)
    why = `Content logging is on, but this request's key ${name} opts out of it (log_content: false).`;
  else if (on === true)
    why =
      'Content logging is on, but none was kept for this request (content from before it was turned on is not kept).';
  else why = 'Not kept: content logging is off, or the key opts out of it.';
  return (
    <p className="muted" data-testid="no-content">
      {why}
    </p>
  );
}

function Failure({ record }: { record: LogRecord }) {
  if (record.status < 400) return null;
  const body = parseJson(record.upstream_body);
  return (
    <section className="error-box" aria-labelledby="failure" data-testid="failure">
      <h2 id="failure">
        Failed: {record.status} {display(record.error_type)}
      </h2>
      <p>{display(record.error_message)}</p>
      <UnpricedLink error={record.error_message} />
      {record.upstream_status !== null && (
        <>
          <p>
            The upstream ({display(record.provider)}) answered <strong>{record.upstream_status}</strong>:
          </p>
          <pre data-testid="upstream-body">
            {body === undefined ? display(record.upstream_body) : JSON.stringify(body, null, 2)}
          </pre>
        </>
      )}
    </section>
  );
}

/** What the record says of the target: served by, the last tried, or none (refused, or never routed). */
function targetItem(record: LogRecord): { name: string; value: string } {
  const target = `${display(record.provider)} / ${display(record.model)}`;
  if (refusedBeforeRouting(record)) return { name: 'Routed to', value: 'none: refused before routing' };
  if (record.status < 400 && record.provider !== null) return { name: 'Served by', value: target };
  const tried = record.attempts?.at(-1);
  if (tried) return { name: 'Last tried', value: `${tried.provider} / ${display(tried.model)}` };
  if (record.fallback_index !== null) return { name: 'Last tried', value: target };
  return { name: 'Routed to', value: record.provider === null ? 'none' : target };
}

function Routing({ record }: { record: LogRecord }) {
  const attempts = record.attempts ?? [];
  const target = targetItem(record);
  const served = record.status < 400;
  return (
    <section aria-labelledby="routing">
      <h2 id="routing">Routing</h2>
      <dl className="details">
        <Item name="Asked for" value={display(record.requested_model)} />
        <Item name={target.name} value={target.value} />
        {record.fallback_index !== null && (
          <Item
            name="Target"
            value={
              record.fallback_index === 0
                ? 'the first of the plan'
                : `fallback ${record.fallback_index} of the plan`
            }
          />
        )}
        <Item name="Provider key" value={display(record.selected_key_id)} />
        <Item name="Cache" value={display(record.cache_outcome)} />
        <Item name="Guardrails" value={display(record.guardrail_outcome)} />
      </dl>
      {record.routing && (
        <>
          <h3>Why these targets</h3>
          <RoutingDecisionView decision={record.routing} />
        </>
      )}
      {attempts.length > 0 && served && (
        <p className="muted" data-testid="saved-by-fallback">
          {attempts.length === 1 ? 'A target failed' : `${attempts.length} targets failed`} before the one
          that served:
        </p>
      )}
      {attempts.length > 0 && (
        <Table
          caption="Targets tried"
          rows={attempts.map((attempt, index) => ({ ...attempt, index }))}
          rowKey={(row) => String(row.index)}
          empty=""
          columns={[
            { header: '#', cell: (row) => row.index + 1 },
            { header: 'Target', cell: (row) => `${row.provider} / ${display(row.model)}` },
            {
              header: 'Answer',
              cell: (row) => (
                <span className="attempt-failed">
                  {display(row.status)} {display(row.error_type)}
                </span>
              ),
            },
            { header: 'Message', cell: (row) => row.message },
          ]}
        />
      )}
    </section>
  );
}

function Item({ name, value }: { name: string; value: ReactNode }) {
  return (
    <div>
      <dt>{name}</dt>
      <dd>{value}</dd>
    </div>
  );
}

/** An owner by name where the caller may read its collection (its id otherwise, and beside the name). */
function OwnerName({ collection, id }: { collection: 'teams' | 'customers'; id: string | null }) {
  const { can } = useAuth();
  const list = useApiQuery<Array<Team | Customer>>(
    id && can(`${collection}:read`) ? `/api/governance/${collection}` : undefined,
  );
  if (!id) return '—';
  const name = list.data?.find((owner) => owner.id === id)?.name;
  return name ? `${name} (${id})` : id;
}

function Summary({ record }: { record: LogRecord }) {
  return (
    <dl className="details">
      <Item name="Time" value={formatTime(record.time)} />
      <Item
        name="Status"
        value={<span className={record.status >= 400 ? 'bad' : 'ok'}>{record.status}</span>}
      />
      <Item name="Route" value={`${record.route} (${record.surface})`} />
      <Item
        name="Virtual key"
        value={
          record.virtual_key_id ? (
            <Link to="/keys" data-testid="record-key">
              {record.virtual_key_name ?? record.virtual_key_id}
            </Link>
          ) : (
            'none'
          )
        }
      />
      <Item name="Team" value={<OwnerName collection="teams" id={record.team_id} />} />
      <Item name="Customer" value={<OwnerName collection="customers" id={record.customer_id} />} />
      <Item name="User" value={display(record.user_id)} />
      <Item name="Business unit" value={display(record.business_unit_id)} />
      <Item name="Cost" value={<span data-testid="record-cost">{formatUsd(record.cost)}</span>} />
      {record.cost_breakdown && (
        <Item
          name="Billed for"
          value={
            <span data-testid="record-cost-breakdown">
              {`${formatUsd(record.cost_breakdown.input)} input, ${formatUsd(record.cost_breakdown.cached_input)} cached input, ${formatUsd(record.cost_breakdown.cache_write)} cache write, ${formatUsd(record.cost_breakdown.output)} output (${formatUsd(record.cost_breakdown.reasoning)} of it reasoning)${record.cost_breakdown.audio === undefined ? '' : `, ${formatUsd(record.cost_breakdown.audio)} audio`}`}
            </span>
          }
        />
      )}
      <Item
        name="Tokens"
        value={`${formatTokens(record.input_tokens)} in (${record.cached_tokens} cached), ${formatTokens(record.output_tokens)} out (${record.reasoning_tokens} reasoning)`}
      />
      <Item name="Latency" value={formatMs(record.latency_ms)} />
      <Item name="First token" value={formatMs(record.time_to_first_token_ms)} />
      <Item name="Trace id" value={display(record.trace_id)} />
      <Item name="Request id" value={record.id} />
    </dl>
  );
}

export default function LogDetail() {
  const { id = '' } = useParams();
  const record = useApiQuery<LogRecord>(`/api/logs/${encodeURIComponent(id)}`);
  return (
    <>
      <PageHeader title="Request">
        <Link to="/logs">Back to logs</Link>
      </PageHeader>
      <QueryView query={record}>
        {(row) => {
          const asked = requestTurns(parseJson(row.request_content));
          const answered = answerTurns(row.response_content);
          const kept = row.request_content !== null || row.response_content !== null;
          return (
            <>
              <Failure record={row} />
              <Summary record={row} />
              <Routing record={row} />
              <section aria-labelledby="messages">
                <h2 id="messages">Messages</h2>
                {kept ? (
                  <>
                    {row.content_truncated && (
                      <p className="muted">Cut to logs.content_max_bytes: the end is not kept.</p>
                    )}
                    <Conversation
                      turns={[
                        ...(asked ?? []),
                        ...(answered ?? []).map((turn) => ({ ...turn, answer: true })),
                      ]}
                    />
                    {row.response_content === null && row.status >= 400 && (
                      <p className="muted">No answer: the request failed (above).</p>
                    )}
                    <Raw title="Request body" text={row.request_content} />
                    <Raw title="Response body" text={row.response_content} />
                  </>
                ) : (
                  <NoContent record={row} />
                )}
              </section>
            </>
          );
        }}
      </QueryView>
    </>
  );
}
