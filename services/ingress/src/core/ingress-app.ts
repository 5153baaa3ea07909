import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GovernanceService } from '@gw/governance';
import type { RouterService } from '@gw/router';
import {
  type ClientConfig,
  carriesToken,
  type Logger,
  type Metrics,
  methodNotAllowed,
  metricsTokenRequired,
  newRequestId,
  sendError,
  sendJson,
} from '@gw/shared';
import { mcpStage } from '../pipeline/mcp-stage.ts';
import { createPipeline } from '../pipeline/pipeline.ts';
import { recordStage } from '../pipeline/record-stage.ts';
import { createSettler, settleStage } from '../pipeline/settle-stage.ts';
import type { McpIngress } from './mcp-tools.ts';
import type { RequestContext, Route, RouteHandler } from './route.ts';
import { buildRoutes } from './routes/index.ts';

export interface IngressDependencies {
  governance: GovernanceService;
  router: RouterService;
  logger: Logger;
  metrics: Metrics;
  client: ClientConfig;
  /** True while the process drains: /health answers 503 so load balancers stop sending. */
  isDraining?: () => boolean;
  /** MCP tool execution and injection; without it `/v1/mcp/tool/execute` answers 400 mcp_not_configured. */
  mcp?: McpIngress | undefined;
  /** GW_METRICS_TOKEN: when set, `/metrics` answers only its bearer. */
  metricsToken?: string | undefined;
}

const REQUEST_ID = /^[\w.:-]{1,128}$/;

/**
 * The ingress HTTP handler: every inference path, /metrics and /health. Plain node:http (no framework): the
 * hot path is one Map lookup, parse, authorize, route, write.
 */
export function createIngressApp(dependencies: IngressDependencies) {
  const { governance, router, logger, metrics, client, mcp } = dependencies;
  // The stages after authorize, outermost first (docs/architecture.md). The SPEC chat paths add MCP's.
  const settler = createSettler({ governance, logger });
  const stages = [recordStage(metrics), settleStage(settler)];
  const pipeline = createPipeline({ governance, router, settler, stages });
  const chatPipeline = mcp
    ? createPipeline({ governance, router, settler, stages: [...stages, mcpStage(mcp)] })
    : pipeline;

  const health: RouteHandler = async (_request, response) => {
    if (dependencies.isDraining?.()) sendJson(response, 503, { status: 'draining' });
    else sendJson(response, 200, { status: 'ok' });
  };

  const metricsHandler: RouteHandler = async (request, response) => {
    if (!carriesToken(request.headers, dependencies.metricsToken)) throw metricsTokenRequired();
    for (const provider of await router.health().catch(() => [])) {
      const value = provider.state === 'healthy' ? 1 : provider.state === 'degraded' ? 0.5 : 0;
      metrics.providerHealth.set({ provider: provider.provider }, value);
      metrics.providerErrorRate.set({ provider: provider.provider }, provider.errorRate);
    }
    const text = await metrics.registry.metrics();
    response.writeHead(200, { 'content-type': metrics.registry.contentType });
    response.end(text);
  };

  const routes: Route[] = [
    ...buildRoutes({
      pipeline,
      chatPipeline,
      metrics,
      logger,
      maxBodyBytes: client.max_request_body_bytes,
      mcp: mcp && { ...mcp, governance },
    }),
    { method: 'GET', path: '/health', handler: health },
    { method: 'GET', path: '/metrics', handler: metricsHandler },
  ];
  const exact = new Map(routes.filter((route) => route.path).map((route) => [route.path!, route]));
  const prefixed = routes
    .filter((route) => route.prefix)
    .sort((left, right) => right.prefix!.length - left.prefix!.length);

  function find(path: string): Route | undefined {
    return (
      exact.get(path) ??
      prefixed.find((route) => path === route.prefix || path.startsWith(`${route.prefix}/`))
    );
  }

  function allows(route: Route, method: string | undefined): boolean {
    return typeof route.method === 'string' ? route.method === method : route.method.includes(method ?? '');
  }

  /** Answers the request when the path is an ingress route; false when it is not (embedded mode falls through to admin). */
  function handle(request: IncomingMessage, response: ServerResponse): boolean {
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const route = find(path);
    if (!route) return false;
    const incomingId = request.headers['x-request-id'];
    const context: RequestContext = {
      requestId: typeof incomingId === 'string' && REQUEST_ID.test(incomingId) ? incomingId : newRequestId(),
      route: route.path ?? `${route.prefix}/*`,
      path,
      startedAt: performance.now(),
      provider: '',
    };
    const fail = (error: unknown) => {
      if (route.sendError && !response.headersSent) route.sendError(response, error, context);
      else {
        const failure = sendError(response, error, context.requestId);
        if (failure.status >= 500)
          logger.error({ err: error, requestId: context.requestId }, 'request failed');
      }
    };
    if (!allows(route, request.method)) {
      fail(methodNotAllowed({ method: request.method, path, allowed: route.method }));
      return true;
    }
    metrics.inflight.inc();
    route.handler(request, response, context).then(
      () => finish(response, context),
      (error: unknown) => {
        fail(error);
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

  return { handle, drain: settler.drain };
}
