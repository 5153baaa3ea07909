import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Admission } from '@gw/governance';
import type { RouterService } from '@gw/router';
import {
  type ClientConfig,
  carriesToken,
  type Live,
  type Logger,
  type Metrics,
  methodNotAllowed,
  metricsTokenRequired,
  newRequestId,
  noEndpoint,
  type Probes,
  probeStatus,
  sendError,
  sendJson,
  throttledLog,
  toGatewayError,
} from '@gw/shared';
import { HEALTH_STATE_VALUE } from '@gw/shared/health';
import type { Tracer } from '@gw/shared/tracing';
import { createCors } from './http/cors.ts';
import { endRequestSpan, startRequestSpan } from './http/request-span.ts';
import type { RequestContext, RouteHandler } from './http/route.ts';
import { compileRoutes, wildcardOf } from './http/route-table.ts';
import { type CacheStageOptions, cacheStage } from './pipeline/cache-stage.ts';
import type { IngressGuardrails } from './pipeline/guardrail-stage.ts';
import { mcpStage } from './pipeline/mcp-stage.ts';
import type { McpIngress } from './pipeline/mcp-tools.ts';
import { createPipeline } from './pipeline/pipeline.ts';
import { recordStage } from './pipeline/record-stage.ts';
import { createSettler, settleStage } from './pipeline/settle-stage.ts';
import { traceStage } from './pipeline/trace-stage.ts';
import { noteFailedTarget, type RequestLog } from './request/request-log.ts';
import { buildRoutes } from './routes/index.ts';

export interface IngressDependencies {
  admission: Admission;
  router: RouterService;
  logger: Logger;
  metrics: Metrics;
  /** The client settings (CORS origins, body size), followed live. */
  client: Live<ClientConfig>;
  /**
   * `/health` (503 while the process drains, as ever), `/health/ready` (503 while it drains or a dependency is
   * missing) and `/health/live` (503 when its event loop is wedged): docs/kubernetes.md "Probes".
   */
  probes: Probes;
  /** MCP tool execution and injection; without it `/v1/mcp/tool/execute` answers 400 mcp_not_configured. */
  mcp?: McpIngress | undefined;
  /** GW_METRICS_TOKEN: when set, `/metrics` answers only its bearer. */
  metricsToken?: string | undefined;
  /** A server span per request and the trace stage (docs/tracing.md); none when tracing is off. */
  tracer?: Tracer | undefined;
  /** Guardrail checks around the router call and on MCP tool calls; none when guardrails cannot exist here. */
  guardrails?: IngressGuardrails | undefined;
  /** The response cache, when `cache.enabled`: a stage innermost, after MCP's tools are added. */
  cache?: Pick<CacheStageOptions, 'cache' | 'config'> | undefined;
  /** Request logs (docs/logs.md): a record per request, and the dropped counts; none when logs cannot exist here. */
  requestLog?: RequestLog | undefined;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * The ingress HTTP handler: every inference path, /metrics and /health. Plain node:http (no framework): the
 * hot path is one Map lookup, parse, authorize, route, write.
 */
export function createIngressApp(dependencies: IngressDependencies) {
  const { admission, router, logger, metrics, client, mcp, tracer, requestLog } = dependencies;
  // The stages after authorize, outermost first (docs/architecture.md). The native chat paths add MCP's.
  const settler = createSettler({ admission, logger });
  // An outage (Redis, governance) fails every request alike: one line per kind of failure and 10 s, then a count.
  const requestFailed = throttledLog(logger, 'error');
  // Guardrails wrap the cache and the router call, so every agent-loop round is checked, and a cached answer is
  // checked like a fresh one (and looked up by the input as the guardrails left it).
  const guarded = dependencies.guardrails ? [dependencies.guardrails.stage] : [];
  const cache = dependencies.cache ? [cacheStage({ ...dependencies.cache, router, metrics, logger })] : [];
  const base = [
    recordStage(metrics, requestLog),
    settleStage(settler),
    ...(tracer ? [traceStage(tracer)] : []),
  ];
  const stages = [...base, ...guarded, ...cache];
  const passthroughInput = dependencies.guardrails?.passthroughInput;
  const pipeline = createPipeline({ admission, router, settler, stages, passthroughInput });
  const chatPipeline = mcp
    ? createPipeline({
        admission,
        router,
        settler,
        stages: [...base, mcpStage(mcp), ...guarded, ...cache],
        passthroughInput,
      })
    : pipeline;

  const { probes } = dependencies;
  const health: RouteHandler = async (_request, response) => {
    if (probes.draining) sendJson(response, 503, { status: 'draining' });
    else sendJson(response, 200, { status: 'ok' });
  };
  const ready: RouteHandler = async (_request, response) => {
    const report = await probes.readiness();
    sendJson(response, probeStatus(report), report);
  };
  const live: RouteHandler = async (_request, response) => {
    const report = probes.liveness();
    sendJson(response, probeStatus(report), report);
  };

  const metricsHandler: RouteHandler = async (request, response) => {
    if (!carriesToken(request.headers, dependencies.metricsToken)) throw metricsTokenRequired();
    for (const provider of await router.health().catch(() => [])) {
      metrics.providerHealth.set({ provider: provider.provider }, HEALTH_STATE_VALUE[provider.state]);
      metrics.providerErrorRate.set({ provider: provider.provider }, provider.error_rate);
    }
    const text = await metrics.registry.metrics();
    response.writeHead(200, { 'content-type': metrics.registry.contentType });
    response.end(text);
  };

  /** Probes and scrapes: no request-log record each. */
  const unlogged = new Set<RouteHandler>([health, ready, live, metricsHandler]);

  const match = compileRoutes([
    ...buildRoutes({
      pipeline,
      chatPipeline,
      metrics,
      logger,
      bodyLimit: client,
      mcp: mcp && { ...mcp, admission, guardrails: dependencies.guardrails },
    }),
    {
      routes: [
        { method: 'GET', path: '/health', handler: health },
        { method: 'GET', path: '/health/ready', handler: ready },
        { method: 'GET', path: '/health/live', handler: live },
        { method: 'GET', path: '/metrics', handler: metricsHandler },
      ],
    },
  ]);

  const cors = createCors(() => client.current().cors_allowed_origins);

  /** Answers the request when the path is an ingress route; false when it is not (embedded mode falls through to admin). */
  function handle(request: IncomingMessage, response: ServerResponse): boolean {
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const matched = match(path);
    if (!matched) return false;
    if (cors(request, response, matched)) return true;
    const incomingId = request.headers['x-request-id'];
    const context: RequestContext = {
      requestId: typeof incomingId === 'string' && REQUEST_ID.test(incomingId) ? incomingId : newRequestId(),
      route: matched.pattern,
      path,
      wildcard: wildcardOf(matched, path),
      startedAt: performance.now(),
      provider: '',
    };
    const { sendError: sendGroupError } = matched.group;
    const fail = (error: unknown) => {
      const failure = toGatewayError(error);
      context.errorType = failure.type;
      noteFailedTarget(context.log, failure);
      if (failure.type === 'request_dropped') requestLog?.dropped(failure.code);
      if (sendGroupError && !response.headersSent) sendGroupError(response, error, context);
      else {
        sendError(response, failure, context.requestId);
        if (failure.status >= 500)
          requestFailed(
            `${failure.status}:${failure.type}:${failure.code ?? ''}`,
            { err: error, requestId: context.requestId },
            'request failed',
          );
      }
    };
    const route = matched.routes.get(request.method ?? '');
    if (!route) {
      if (matched.allow) response.setHeader('allow', matched.allow);
      fail(
        matched.allow
          ? methodNotAllowed({ method: request.method, path, allowed: matched.allowed })
          : noEndpoint(request.method, path),
      );
      return true;
    }
    metrics.inflight.inc();
    if (tracer) context.span = startRequestSpan(tracer, request, context);
    if (requestLog && !unlogged.has(route.handler)) context.log = requestLog.start();
    route.handler(request, response, context).then(
      () => finish(response, context),
      (error: unknown) => {
        context.span?.fail(error);
        fail(error);
        finish(response, context);
      },
    );
    return true;
  }

  function finish(response: ServerResponse, context: RequestContext): void {
    metrics.inflight.dec();
    if (context.span) endRequestSpan(context.span, response);
    const provider = context.provider || 'none';
    metrics.requests.inc({ route: context.route, provider, status: String(response.statusCode) });
    metrics.requestDuration.observe(
      { route: context.route, provider },
      (performance.now() - context.startedAt) / 1000,
    );
    if (context.log) {
      // 499: the caller went away before the answer was complete (a stream it hung up on).
      const gone = response.destroyed && !response.writableFinished;
      const errorType = context.errorType ?? (gone ? 'cancelled' : null);
      requestLog?.finish(context, gone ? 499 : response.statusCode, errorType);
    }
  }

  return { handle, drain: settler.drain };
}
