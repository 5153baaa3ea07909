import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GovernanceService, SettleRequest } from '@gw/governance';
import type { RouteRequest, RouterService, StreamItem } from '@gw/router';
import {
  type ClientConfig,
  EMPTY_USAGE,
  GatewayError,
  type Logger,
  type Metrics,
  newRequestId,
  parseJson,
  readBody,
  sendError,
  sendJson,
  type Usage,
} from '@gw/shared';
import { estimateOf, type ParsedCompletion, parseChatRequest, parseTextRequest } from './parse-request.ts';
import { findVirtualKey } from './virtual-key-header.ts';

export interface IngressDependencies {
  governance: GovernanceService;
  router: RouterService;
  logger: Logger;
  metrics: Metrics;
  client: ClientConfig;
  /** True while the process drains: /health answers 503 so load balancers stop sending. */
  isDraining?: () => boolean;
}

type Handler = (request: IncomingMessage, response: ServerResponse, context: RequestContext) => Promise<void>;

interface RequestContext {
  requestId: string;
  route: string;
  startedAt: number;
  provider: string;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * The ingress HTTP handler: every inference path, /metrics and /health. Plain node:http (no framework):
 * the hot path is parse, authorize, route, write.
 */
export function createIngressApp(dependencies: IngressDependencies) {
  const { governance, router, logger, metrics, client } = dependencies;

  const pendingSettles = new Set<Promise<void>>();

  /**
   * Settles off the response's critical path, retrying transient failures; a settle that never lands is
   * charged at its estimate by governance's sweeper, so usage is never lost.
   */
  function settleLater(request: SettleRequest): void {
    const attempt = async () => {
      for (let attempt = 0; ; attempt++) {
        try {
          await governance.settle(request);
          return;
        } catch (error) {
          if (attempt >= 4) throw error;
          await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
        }
      }
    };
    const pending = attempt()
      .catch((error) =>
        logger.error(
          { err: error, requestId: request.requestId },
          'settle failed; the sweeper will charge the estimate',
        ),
      )
      .finally(() => pendingSettles.delete(pending));
    pendingSettles.add(pending);
  }

  const completion =
    (parse: (body: unknown, bytes: number) => ParsedCompletion): Handler =>
    async (request, response, context) => {
      const body = await readBody(request, client.max_request_body_bytes);
      const parsed = parse(parseJson(body), body.length);
      const plan = await governance.authorize({
        requestId: context.requestId,
        kind: 'llm',
        virtualKey: findVirtualKey(request.headers),
        headerNames: Object.keys(request.headers),
        targets: [parsed.target, ...parsed.fallbacks],
        estimate: estimateOf(parsed),
      });
      const routeRequest: RouteRequest = {
        requestId: context.requestId,
        operation: parsed.operation,
        targets: plan.targets,
        params: parsed.params,
      };
      if (parsed.messages) routeRequest.messages = parsed.messages;
      if (parsed.prompt !== undefined) routeRequest.prompt = parsed.prompt;

      const abort = new AbortController();
      response.on('close', () => {
        if (!response.writableFinished) abort.abort();
      });

      let outcome: { provider: string; model: string; usage: Usage } | undefined;
      try {
        if (parsed.stream) {
          outcome = await writeStream(
            response,
            router.stream(routeRequest, { signal: abort.signal }),
            context,
          );
        } else {
          const result = await router.complete(routeRequest, { signal: abort.signal });
          context.provider = result.provider;
          response.writeHead(200, {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(result.body),
            'x-request-id': context.requestId,
          });
          response.end(result.body);
          outcome = result;
        }
      } finally {
        // A failed request settles too (with no usage), releasing what authorize reserved.
        if (plan.settlement) {
          const first = plan.targets[0];
          settleLater({
            requestId: context.requestId,
            settlement: plan.settlement,
            provider: outcome?.provider ?? first?.provider ?? '',
            model: outcome?.model ?? first?.model ?? '',
            usage: outcome?.usage ?? EMPTY_USAGE,
          });
        }
      }
    };

  /** Writes SSE as chunks arrive; an error after the first chunk becomes an error event. */
  async function writeStream(
    response: ServerResponse,
    items: AsyncIterable<StreamItem>,
    context: RequestContext,
  ) {
    let provider = context.provider;
    let model = '';
    let usage: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
    try {
      for await (const item of items) {
        if (!response.headersSent) {
          provider = item.provider ?? provider;
          model = item.model ?? model;
          context.provider = provider;
          response.writeHead(200, {
            'content-type': 'text/event-stream',
            'cache-control': 'no-cache',
            connection: 'keep-alive',
            'x-request-id': context.requestId,
          });
          metrics.streamFirstChunk.observe(
            { route: context.route, provider },
            (performance.now() - context.startedAt) / 1000,
          );
        }
        if (item.usage) usage = item.usage;
        if (response.destroyed) break;
        response.write(`data: ${item.chunk}\n\n`);
      }
    } catch (error) {
      if (!response.headersSent) throw error;
      const failure =
        error instanceof GatewayError
          ? error
          : new GatewayError({ type: 'internal_error', status: 500, message: 'stream failed' });
      if (!response.destroyed) {
        response.write(
          `data: ${JSON.stringify({ error: { type: failure.type, message: failure.message, code: failure.code, param: failure.param }, status_code: failure.status })}\n\n`,
        );
        response.end();
      }
      logger.warn(
        { requestId: context.requestId, provider, type: failure.type },
        'stream failed after it started',
      );
      return { provider, model, usage };
    }
    if (!response.headersSent) {
      response.writeHead(200, { 'content-type': 'text/event-stream', 'x-request-id': context.requestId });
    }
    if (!response.destroyed) response.end('data: [DONE]\n\n');
    return { provider, model, usage };
  }

  const health: Handler = async (_request, response) => {
    if (dependencies.isDraining?.()) sendJson(response, 503, { status: 'draining' });
    else sendJson(response, 200, { status: 'ok' });
  };

  const metricsHandler: Handler = async (_request, response) => {
    for (const provider of await router.health().catch(() => [])) {
      metrics.providerHealth.set(
        { provider: provider.provider },
        provider.state === 'healthy' ? 1 : provider.state === 'degraded' ? 0.5 : 0,
      );
      metrics.providerErrorRate.set({ provider: provider.provider }, provider.errorRate);
    }
    const text = await metrics.registry.metrics();
    response.writeHead(200, { 'content-type': metrics.registry.contentType });
    response.end(text);
  };

  const routes = new Map<string, { method: string; handler: Handler }>([
    ['/v1/chat/completions', { method: 'POST', handler: completion(parseChatRequest) }],
    ['/chat/completions', { method: 'POST', handler: completion(parseChatRequest) }],
    ['/v1/text/completions', { method: 'POST', handler: completion(parseTextRequest) }],
    ['/health', { method: 'GET', handler: health }],
    ['/metrics', { method: 'GET', handler: metricsHandler }],
  ]);

  /** Answers the request when the path is an ingress route; false when it is not (embedded mode falls through to admin). */
  function handle(request: IncomingMessage, response: ServerResponse): boolean {
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const route = routes.get(path);
    if (!route) return false;
    const incomingId = request.headers['x-request-id'];
    const context: RequestContext = {
      requestId: typeof incomingId === 'string' && REQUEST_ID.test(incomingId) ? incomingId : newRequestId(),
      route: path,
      startedAt: performance.now(),
      provider: '',
    };
    if (request.method !== route.method) {
      sendError(
        response,
        new GatewayError({
          type: 'method_not_allowed',
          status: 405,
          message: `${request.method} is not allowed on ${path}; use ${route.method}`,
        }),
        context.requestId,
      );
      return true;
    }
    metrics.inflight.inc();
    route.handler(request, response, context).then(
      () => finish(response, context),
      (error: unknown) => {
        const failure = sendError(response, error, context.requestId);
        if (failure.status >= 500)
          logger.error({ err: error, requestId: context.requestId }, 'request failed');
        finish(response, context);
      },
    );
    return true;
  }

  function finish(response: ServerResponse, context: RequestContext): void {
    metrics.inflight.dec();
    const provider = context.provider || 'none';
    metrics.requests.inc({ route: context.route, provider, status: String(response.statusCode) });
    metrics.requestDuration.observe(
      { route: context.route, provider },
      (performance.now() - context.startedAt) / 1000,
    );
  }

  /** Waits for background settles (shutdown: after the server stopped taking requests). */
  async function drain(): Promise<void> {
    await Promise.allSettled([...pendingSettles]);
  }

  return { handle, drain };
}

export type IngressApp = ReturnType<typeof createIngressApp>;
