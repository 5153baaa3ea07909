import type { IncomingHttpHeaders } from 'node:http';
import type { Admission, AuthorizeResult } from '@gw/governance';
import type {
  CompletionResult,
  CompletionRoute,
  EmbeddingsResult,
  EmbeddingsRoute,
  PassthroughRequest,
  PassthroughResponse,
  RouteRequest,
  RouterService,
  StreamItem,
} from '@gw/router';
import { internalError, type Usage } from '@gw/shared';
import type { TraceSpan } from '@gw/shared/tracing';
import { estimateOf } from '../request/estimate-tokens.ts';
import type { ParsedCompletion } from '../request/parse-request.ts';
import type { RequestLogDraft } from '../request/request-log.ts';
import { headerSafe, routingInput } from '../request/routing-input.ts';
import { findVirtualKey, presentHeaderNames } from '../request/virtual-key-header.ts';
import type { IngressGuardrails, PassthroughContent } from './guardrail-stage.ts';
import type { Settler } from './settle-stage.ts';
import { type AnswerHeaders, compose, type Exchange, type Stage } from './stage.ts';

export interface PipelineDependencies {
  admission: Admission;
  router: RouterService;
  settler: Settler;
  /** The stages between authorize and the router, outermost first (docs/architecture.md). */
  stages: readonly Stage[];
  /** Guardrails on a pass-through call's body, where guardrails can exist (guardrail-stage.ts). */
  passthroughInput?: IngressGuardrails['passthroughInput'] | undefined;
}

/** A parsed request as a route hands it to the pipeline. */
export interface PipelineCall {
  requestId: string;
  headers: IncomingHttpHeaders;
  parsed: ParsedCompletion;
  signal: AbortSignal;
  /** The request's ingress span, when it is traced (RequestContext.span). */
  span?: TraceSpan | undefined;
  /** Headers stages add to the answer (the route's response). */
  answerHeaders?: AnswerHeaders | undefined;
  /** The request's log draft (RequestContext.log), while request logs are on. */
  log?: RequestLogDraft | undefined;
}

/** A pass-through call as a route hands it to the pipeline (docs/surfaces.md). */
export interface PassthroughCall {
  requestId: string;
  headers: IncomingHttpHeaders;
  /** The provider and model the call is authorized for (model `*` when the call names none). */
  target: { provider: string; model: string };
  request: Omit<PassthroughRequest, 'requestId' | 'target'>;
  body: AsyncIterable<Uint8Array> | undefined;
  /** Rough size of the upload in tokens, for budget reservations. */
  promptTokens: number;
  /** The body as guardrails read it: its JSON (sent as `body`), `opaque`, or undefined without a body. */
  content?: PassthroughContent;
  signal: AbortSignal;
  span?: TraceSpan | undefined;
  log?: RequestLogDraft | undefined;
}

/** What the router is asked for a parsed completion, along the targets governance planned. */
function completionRoute(call: PipelineCall, authorization: AuthorizeResult): CompletionRoute {
  const { parsed } = call;
  // A strict budget that buys less than the default answer sets max_tokens for a request that set none.
  const params =
    authorization.maxCompletionTokens === undefined
      ? parsed.params
      : { ...parsed.params, max_tokens: authorization.maxCompletionTokens };
  const base = { requestId: call.requestId, targets: authorization.targets, params };
  if (parsed.operation === 'chat') {
    const route: CompletionRoute = { ...base, operation: 'chat', messages: parsed.messages ?? [] };
    const { native } = parsed;
    if (!native) return route;
    // The native request carries the caller's own limit; governance's tighter one replaces it there too.
    route.native =
      authorization.maxCompletionTokens === undefined
        ? native
        : { ...native, body: { ...native.body, max_tokens: authorization.maxCompletionTokens } };
    return route;
  }
  if (parsed.operation === 'text') return { ...base, operation: 'text', prompt: parsed.prompt ?? '' };
  throw internalError('an embeddings request was routed as a completion');
}

function embeddingsRoute(call: PipelineCall, authorization: AuthorizeResult): EmbeddingsRoute {
  const { parsed } = call;
  if (parsed.operation !== 'embeddings') throw internalError('a completion was routed as embeddings');
  return {
    requestId: call.requestId,
    targets: authorization.targets,
    params: parsed.params,
    operation: 'embeddings',
    input: parsed.input ?? '',
  };
}

/**
 * The staged request pipeline (docs/architecture.md): the route parses; authorize runs once
 * and makes the exchange; the stages wrap the router call in list order; the route renders the result.
 */
export function createPipeline(dependencies: PipelineDependencies) {
  const { admission, router, stages } = dependencies;

  /** Governance, once per request: the plan, the key, its MCP policy and the reservation. */
  async function authorize<Route extends RouteRequest>(
    call: PipelineCall,
    routeOf: (call: PipelineCall, authorization: AuthorizeResult) => Route,
  ): Promise<Exchange<Route>> {
    if (call.log) {
      const { provider, model } = call.parsed.target;
      call.log.requestedModel = provider ? `${provider}/${model}` : model;
    }
    const estimate = estimateOf(call.parsed);
    const authorization = await admission.authorize(
      {
        requestId: call.requestId,
        kind: 'llm',
        virtualKey: findVirtualKey(call.headers),
        headerNames: presentHeaderNames(call.headers),
        targets: [call.parsed.target, ...call.parsed.fallbacks],
        estimate,
        routing: routingInput(call.parsed, call.headers, estimate.promptTokens),
      },
      { trace: call.span?.context },
    );
    const rule = authorization.routing?.rule;
    if (rule && call.answerHeaders && !call.answerHeaders.headersSent)
      call.answerHeaders.setHeader('x-gw-routing-rule', headerSafe(rule.name));
    return {
      requestId: call.requestId,
      headers: call.headers,
      signal: call.signal,
      authorization,
      span: call.span,
      route: routeOf(call, authorization),
      answerHeaders: call.answerHeaders,
      log: call.log,
    };
  }

  const callOptions = (exchange: Exchange) => ({ signal: exchange.signal, trace: exchange.span?.context });
  const complete = compose('complete', stages, (exchange) =>
    router.complete(exchange.route, callOptions(exchange)),
  );
  const stream = compose('stream', stages, async (exchange) =>
    router.stream(exchange.route, callOptions(exchange)),
  );
  const embed = compose('embed', stages, (exchange) => router.embed(exchange.route, callOptions(exchange)));

  return {
    /** A whole chat or text completion. */
    async complete(call: PipelineCall): Promise<CompletionResult> {
      return complete(await authorize(call, completionRoute));
    },

    /** A streamed completion; a denial is thrown before the first item, so it is an ordinary error answer. */
    async stream(call: PipelineCall): Promise<AsyncIterable<StreamItem>> {
      return stream(await authorize(call, completionRoute));
    },

    async embed(call: PipelineCall): Promise<EmbeddingsResult> {
      return embed(await authorize(call, embeddingsRoute));
    },

    /**
     * Governance for a call that reaches no model (a token count gw estimates itself): required headers and
     * the key's status, so such answers are not open to callers the gateway would refuse.
     */
    async checkCaller(call: {
      requestId: string;
      headers: IncomingHttpHeaders;
      span?: TraceSpan | undefined;
    }): Promise<void> {
      await admission.authorize(
        {
          requestId: call.requestId,
          kind: 'meta',
          virtualKey: findVirtualKey(call.headers),
          headerNames: presentHeaderNames(call.headers),
          targets: [],
        },
        { trace: call.span?.context },
      );
    },

    /**
     * A pass-through call (docs/surfaces.md): authorized like a completion; the caller reports the
     * usage the answer carried (or none) through `done` once the answer's body has been relayed.
     */
    async passthrough(
      call: PassthroughCall,
    ): Promise<{ answer: PassthroughResponse; done(usage?: Usage): void }> {
      const trace = call.span?.context;
      const authorization = await admission.authorize(
        {
          requestId: call.requestId,
          kind: 'llm',
          virtualKey: findVirtualKey(call.headers),
          headerNames: presentHeaderNames(call.headers),
          targets: [call.target],
          estimate: { promptTokens: call.promptTokens },
        },
        { trace },
      );
      const target = authorization.targets[0] ?? call.target;
      if (call.log) {
        call.log.authorization = authorization;
        call.log.requestedModel = call.target.model;
        call.log.model = target.model;
      }
      let request: PassthroughRequest = { ...call.request, requestId: call.requestId, target };
      let body = call.body;
      const settle = (usage: Usage | undefined) => {
        const charge = dependencies.settler.settle(
          { requestId: call.requestId, authorization, span: call.span },
          usage && { ...target, usage },
        );
        if (call.log) {
          if (usage) call.log.usage = usage;
          if (charge) call.log.charge = charge;
        }
      };
      let answer: PassthroughResponse;
      try {
        const changed = await dependencies.passthroughInput?.({
          requestId: call.requestId,
          headers: call.headers,
          authorization,
          signal: call.signal,
          operation: call.request.operation,
          target,
          content: call.content,
        });
        if (changed) {
          // A rule rewrote a text (REDACT): the provider gets the body as the rule left it.
          const payload = Buffer.from(JSON.stringify(changed));
          request = { ...request, headers: { ...request.headers, 'content-length': String(payload.length) } };
          body = (async function* () {
            yield payload;
          })();
        }
        answer = await router.passthrough(request, body, { signal: call.signal, trace });
      } catch (error) {
        settle(undefined);
        throw error;
      }
      let settled = false;
      return {
        answer,
        done(usage) {
          if (settled) return;
          settled = true;
          settle(usage);
        },
      };
    },
  };
}

export type Pipeline = ReturnType<typeof createPipeline>;
