import type { AuthorizeResult } from '@gw/governance';
import type { RouteRequest, StreamItem } from '@gw/router';
import { type Metrics, modelLabel, observeStream, type Usage } from '@gw/shared';
import { type RequestLog, type RequestLogDraft, traceIdOf } from '../request/request-log.ts';
import type { Exchange, Stage } from './stage.ts';

/** The request as the gateway routes it (messages, prompt or input, and parameters), for content logging. */
function routedContent(route: RouteRequest): string {
  const {
    targets: _targets,
    requestId: _requestId,
    native: _native,
    ...content
  } = route as RouteRequest & {
    native?: unknown;
  };
  return JSON.stringify(content);
}

/**
 * Fills the request's log draft with what only the pipeline knows (the key and its owners, the trace), and
 * marks whether content is kept (an empty response content). No draft (logs off): nothing.
 */
function begin(exchange: Exchange, requestLog: RequestLog | undefined): RequestLogDraft | undefined {
  const draft = exchange.log;
  if (!draft || !requestLog) return undefined;
  const authorization: AuthorizeResult = exchange.authorization;
  draft.authorization = authorization;
  if (exchange.span?.recording) draft.traceId = traceIdOf(exchange.span.context.traceparent);
  if (requestLog.keepsContent(authorization)) draft.responseContent = '';
  return draft;
}

/** What served a whole answer (chat or embeddings), and the request as the router got it. */
function answered(
  draft: RequestLogDraft,
  exchange: Exchange,
  result: { provider: string; response: { model: string }; servedBy?: RequestLogDraft['servedBy'] },
  usage: Usage,
): void {
  draft.provider = result.provider;
  draft.model = result.response.model;
  draft.usage = usage;
  draft.servedBy = result.servedBy;
  served(draft, exchange);
}

/** The request as it reached the router: after the stages inside changed it (a guardrail's redaction). */
function served(draft: RequestLogDraft, exchange: Exchange): void {
  draft.guardrail = exchange.guardrail;
  if (draft.responseContent !== undefined) draft.requestContent = routedContent(exchange.route);
}

/**
 * The router call under the draft: a failure keeps the request's content too (when content is kept), so a
 * failed request can be read back as it was sent.
 */
async function watched<T>(draft: RequestLogDraft | undefined, exchange: Exchange, next: () => Promise<T>) {
  try {
    return await next();
  } catch (error) {
    if (draft) {
      served(draft, exchange);
      draft.responseContent = undefined;
    }
    throw error;
  }
}

/** Streamed text joined for the record, bounded: past the content limit the rest is not kept. */
function appendText(draft: RequestLogDraft, item: StreamItem, limit: number): void {
  if (draft.responseContent === undefined || draft.responseContent.length > limit) return;
  for (const choice of item.chunk.choices) {
    const text = choice.delta?.content ?? choice.text;
    if (text) draft.responseContent += text;
  }
}

/**
 * Record: what a served request used, as metrics (`gw_tokens_total` by provider, model and kind), and what its
 * log record needs (docs/logs.md): the outermost stage, so it sees every round of an agent loop and a cached
 * answer alike. It only fills the request's draft; the ingress writes the record once the answer is over.
 * Counts after the answer exists and never delays it.
 */
export function recordStage(metrics: Metrics, requestLog?: RequestLog): Stage {
  const count = (provider: string, model: string, usage: Usage) => {
    const labels = { provider, model: modelLabel(model) };
    metrics.tokens.inc({ ...labels, kind: 'prompt' }, usage.prompt_tokens);
    metrics.tokens.inc({ ...labels, kind: 'completion' }, usage.completion_tokens);
  };
  return {
    name: 'record',
    async complete(exchange, next) {
      const draft = begin(exchange, requestLog);
      const result = await watched(draft, exchange, next);
      count(result.provider, result.response.model, result.response.usage);
      if (draft) {
        answered(draft, exchange, result, result.response.usage);
        if (draft.responseContent !== undefined)
          draft.responseContent = result.json ?? JSON.stringify(result.response);
      }
      return result;
    },
    async embed(exchange, next) {
      const draft = begin(exchange, requestLog);
      const result = await watched(draft, exchange, next);
      const { usage } = result.response;
      const counted = { prompt_tokens: usage.prompt_tokens, completion_tokens: 0, total_tokens: 0 };
      count(result.provider, result.response.model, counted);
      if (draft) {
        answered(draft, exchange, result, counted);
        // An embeddings answer is vectors, not text worth keeping.
        draft.responseContent = undefined;
      }
      return result;
    },
    async stream(exchange, next) {
      const draft = begin(exchange, requestLog);
      const items = await watched(draft, exchange, next);
      if (draft) served(draft, exchange);
      let provider = '';
      let model = '';
      let usage: Usage | undefined;
      const limit = requestLog?.contentMaxBytes ?? 0;
      return observeStream(items, {
        item(item) {
          if (item.provider) provider = item.provider;
          model ||= item.chunk.model;
          if (item.chunk.usage) usage = item.chunk.usage;
          if (!draft) return;
          if (draft.firstItemAt === undefined) {
            draft.firstItemAt = performance.now();
            draft.servedBy = item.servedBy;
          }
          if (draft.responseContent !== undefined) appendText(draft, item, limit);
        },
        end() {
          if (provider && usage) count(provider, model, usage);
          if (!draft) return;
          draft.provider = provider;
          draft.model = model;
          if (usage) draft.usage = usage;
          draft.guardrail = exchange.guardrail;
        },
      });
    },
  };
}
