import { hostname } from 'node:os';
import { type CacheBackend, SemanticCache } from '@gw/cache';
import type { Admission } from '@gw/governance';
import type { GuardrailRuntime } from '@gw/guardrails/registry';
import { DroppedTally, type LogRecord, type LogSink, LogWriter } from '@gw/logs';
import type { McpCatalog, ToolExecutor } from '@gw/mcp-runner/control';
import type { RouterService } from '@gw/router';
import { type LiveSettings, type Logger, type Metrics, type Probes, throttledLog } from '@gw/shared';
import type { Tracer } from '@gw/shared/tracing';
import { createIngressApp } from './ingress-app.ts';
import { createGuardrails } from './pipeline/guardrail-stage.ts';
import { createRequestLog } from './request/request-log.ts';

/** Ingress of a gateway config: its one composition root, used by its main and by the embedded gateway. */
export function composeIngress(options: {
  /** The live settings: client, MCP, request-log and cache settings apply to the next request. */
  settings: LiveSettings;
  /** Authorize and settle: a governance core (embedded), this process's own admission or the gRPC client. */
  admission: Admission;
  router: RouterService;
  logger: Logger;
  metrics: Metrics;
  /** What `/health`, `/health/ready` and `/health/live` report: draining, dependencies, a wedged event loop. */
  probes: Probes;
  /** The MCP catalog and the queue that runs tool calls; none when this ingress has no MCP. */
  mcp: { catalog: McpCatalog; executor: ToolExecutor } | undefined;
  /** GW_METRICS_TOKEN: when set, `/metrics` answers only its bearer. */
  metricsToken?: string | undefined;
  /** The ingress's tracer when `tracing.enabled`. */
  tracer?: Tracer | undefined;
  /** The guardrails this process applies (config file and store); none when guardrails cannot exist here. */
  guardrails?: GuardrailRuntime | undefined;
  /** Where cache entries live (memory embedded, Redis in a cluster); given when `cache.enabled`. */
  cacheBackend?: CacheBackend | undefined;
  /**
   * Where request logs go (the SQLite store embedded, the Redis stream in a cluster) and the process's dropped
   * counts; none when this ingress keeps no logs (a cluster without GW_LOGS_DATABASE_URL, GW_LOGS_STREAM=off).
   */
  logs?: IngressLogs | undefined;
}) {
  const { settings, mcp, cacheBackend, logger } = options;
  const cacheFailed = throttledLog(logger, 'warn');
  const writer =
    options.logs &&
    new LogWriter({
      sink: options.logs.sink,
      tally: options.logs.tally,
      onDrop: (reason, count) => options.metrics.droppedLogRecords.inc({ reason }, count),
      onError: (error) => logger.warn({ err: error }, 'request logs: a batch was not written'),
      onWritten: options.logs.onWritten,
    });
  const requestLog =
    writer && createRequestLog({ sink: writer, config: settings.logs, tally: options.logs?.tally });
  const cache =
    cacheBackend &&
    new SemanticCache({
      backend: cacheBackend,
      // Redis down fails every lookup alike: one line per kind of failure and 10 s, then a count.
      onError: (error) =>
        cacheFailed(
          String((error as Error)?.message).slice(0, 200),
          { err: error },
          'cache: a backend call failed (answered as a miss)',
        ),
    });
  const app = createIngressApp({
    admission: options.admission,
    router: options.router,
    logger,
    metrics: options.metrics,
    client: settings.client,
    probes: options.probes,
    mcp: mcp && { ...mcp, settings: settings.mcp },
    metricsToken: options.metricsToken,
    tracer: options.tracer,
    guardrails:
      options.guardrails &&
      createGuardrails({ runtime: options.guardrails, metrics: options.metrics, logger: options.logger }),
    cache: cache && { cache, config: settings.cache },
    requestLog,
  });
  return {
    handle: app.handle,
    /** Waits for settles (whose answers complete log records), then writes the records still buffered. */
    async drain(): Promise<void> {
      await app.drain();
      await writer?.close();
    },
  };
}

/** The request logs of an ingress: where records go, the process's dropped counts, who sees them written. */
export interface IngressLogs {
  sink: LogSink;
  tally: DroppedTally;
  /** Told about each batch written (the embedded live tail). */
  onWritten?: ((records: readonly LogRecord[]) => void) | undefined;
}

/**
 * The process's dropped counts, named so replicas add up (and a restarted process, even with its pid, is
 * another source): for `/api/logs/dropped`.
 */
export function processDroppedTally(): DroppedTally {
  return new DroppedTally(`${hostname()}:${process.pid}:${Date.now().toString(36)}`);
}

/** Counts connections the HTTP server refused or cut for overload, in metrics and in the dropped counts. */
export function countServerDrops(metrics: Metrics, tally: DroppedTally | undefined) {
  return (reason: string, count: number) => {
    metrics.droppedRequests.inc({ provider: 'none', reason }, count);
    tally?.add(reason, count);
  };
}
