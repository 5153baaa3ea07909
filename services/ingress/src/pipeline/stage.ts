import type { IncomingHttpHeaders } from 'node:http';
import type { AuthorizeResult, SideCall } from '@gw/governance';
import type { GuardrailOutcome } from '@gw/guardrails';
import type {
  CompletionResult,
  CompletionRoute,
  EmbeddingsResult,
  EmbeddingsRoute,
  RouteRequest,
  StreamItem,
} from '@gw/router';
import { invalidRequest } from '@gw/shared';
import type { TraceSpan } from '@gw/shared/tracing';
import type { RequestLogDraft } from '../request/request-log.ts';

/**
 * One request between authorize and the answer (docs/architecture.md "The pipeline"). Authorize makes it;
 * every later stage sees it. `route` is what the router will be asked, and a stage may replace it (MCP adds
 * tools; a guardrail may redact).
 */
export interface Exchange<Route extends RouteRequest = RouteRequest> {
  readonly requestId: string;
  readonly headers: IncomingHttpHeaders;
  readonly signal: AbortSignal;
  /** Governance's one answer for this request: the plan, the key, its MCP policy, the settlement. */
  readonly authorization: AuthorizeResult;
  /** The request's ingress span when it is traced: the parent of every later hop's spans. */
  readonly span?: TraceSpan | undefined;
  route: Route;
  /** What the guardrails decided (set by the guardrail stage when a rule applied), for request logs. */
  guardrail?: GuardrailOutcome;
  /** Headers a stage adds to the answer (the cache's hit or miss); absent when nothing answers over HTTP. */
  readonly answerHeaders?: AnswerHeaders | undefined;
  /** Calls a stage made for the request besides its answer (the cache's embedding): settled with it. */
  sideCalls?: SideCall[];
  /** The request's log record in the making, while request logs are on (docs/logs.md). */
  readonly log?: RequestLogDraft | undefined;
}

/**
 * Where a stage sets a header of the answer (the route's ServerResponse itself, so a request pays nothing for
 * it): a header set before the answer's head is written goes out with it, whichever way the route answers.
 */
export interface AnswerHeaders {
  readonly headersSent: boolean;
  setHeader(name: string, value: string): unknown;
}

export type CompletionExchange = Exchange<CompletionRoute>;
export type EmbeddingsExchange = Exchange<EmbeddingsRoute>;

export type Next<Result> = () => Promise<Result>;

/**
 * The route without the caller's native request, for a stage that changes the translation (messages, tools):
 * the provider must then get the translation. A native request that holds what the translation cannot carry
 * is refused here with a 400 rather than served without it.
 */
export function translatedRoute<Route extends RouteRequest>(route: Route): Route {
  if (route.operation !== 'chat' || !route.native) return route;
  const { untranslatable } = route.native;
  if (untranslatable) throw invalidRequest(untranslatable.message, untranslatable.param);
  return { ...route, native: undefined };
}

/**
 * A capability that steps into requests at a known point. Each method wraps the rest of the pipeline for
 * one kind of call: it may change the exchange before `next`, end the request with a GatewayError, answer
 * without calling `next` (a cache hit), call `next` again (an agent loop), or look at what came back. A
 * stage without a method for a kind of call is skipped for it; a capability that is not configured is not in
 * the list at all, so it costs nothing.
 */
export interface Stage {
  readonly name: string;
  complete?(exchange: CompletionExchange, next: Next<CompletionResult>): Promise<CompletionResult>;
  stream?(
    exchange: CompletionExchange,
    next: Next<AsyncIterable<StreamItem>>,
  ): Promise<AsyncIterable<StreamItem>>;
  embed?(exchange: EmbeddingsExchange, next: Next<EmbeddingsResult>): Promise<EmbeddingsResult>;
}

type Kind = 'complete' | 'stream' | 'embed';
type ExchangeOf<K extends Kind> = K extends 'embed' ? EmbeddingsExchange : CompletionExchange;
type ResultOf<K extends Kind> = K extends 'complete'
  ? CompletionResult
  : K extends 'stream'
    ? AsyncIterable<StreamItem>
    : EmbeddingsResult;
type StageMethod<K extends Kind> = (exchange: ExchangeOf<K>, next: Next<ResultOf<K>>) => Promise<ResultOf<K>>;

/**
 * The stages of one kind of call folded around the terminal call, once, when the pipeline is built: the
 * first stage of the list is the outermost.
 */
export function compose<K extends Kind>(
  kind: K,
  stages: readonly Stage[],
  terminal: (exchange: ExchangeOf<K>) => Promise<ResultOf<K>>,
): (exchange: ExchangeOf<K>) => Promise<ResultOf<K>> {
  let run = terminal;
  for (const stage of [...stages].reverse()) {
    const method = stage[kind] as StageMethod<K> | undefined;
    if (!method) continue;
    const inner = run;
    run = (exchange) => method.call(stage, exchange, () => inner(exchange));
  }
  return run;
}
