import { hostname } from 'node:os';
import {
  createLogger,
  createMetrics,
  mcpRunnerEnvironmentSchema,
  otlpTracesEndpoint,
  readSettings,
} from '@gw/shared';
import { metricsHandler, onShutdown, startHttpServer, startService } from '@gw/shared/server';
import { createStore } from '@gw/shared/store';
import { startTracing } from '@gw/shared/tracing';
import { createToolWorker } from './bullmq/tool-worker.ts';
import { startMcpRunner } from './compose.ts';
import { traceToolRunner } from './core/traced-tool-runner.ts';

const logger = createLogger({ service: 'mcp-runner' });
await startService(logger, async () => {
  const { environment, config } = await readSettings(mcpRunnerEnvironmentSchema, process.env);
  logger.level = environment.LOG_LEVEL;
  const store = await createStore(environment);
  const metrics = createMetrics({ service: 'mcp-runner' });
  const tracing = await startTracing({
    config: config.tracing,
    environmentEndpoint: otlpTracesEndpoint(environment),
    metrics,
    logger,
  });
  const runnerId = `${hostname()}:${process.pid}`;
  const { core } = await startMcpRunner({
    config,
    store,
    logger,
    runnerId,
    heartbeatMs: environment.GW_MCP_HEARTBEAT_MS,
    environment: process.env,
  });
  const { close: closeWorker } = createToolWorker({
    redisUrl: environment.REDIS_URL,
    redisPrefix: environment.GW_REDIS_PREFIX,
    runner: tracing ? traceToolRunner(core, tracing.tracer('mcp-runner')) : core,
    concurrency: environment.GW_MCP_CONCURRENCY ?? config.mcp.worker_concurrency,
    lockDurationMs: environment.GW_MCP_LOCK_DURATION_MS,
    stalledIntervalMs: environment.GW_MCP_STALLED_INTERVAL_MS,
    name: `mcp-runner:${runnerId}`,
    logger,
  });
  // /metrics, and the port the orchestrator's probes check.
  const http = await startHttpServer({
    port: environment.GW_METRICS_PORT,
    host: environment.GW_HOST,
    handlers: [metricsHandler(metrics, environment.GW_METRICS_TOKEN)],
  });
  logger.info({ runner: runnerId, metricsPort: http.port }, 'mcp-runner working');
  // Stop taking jobs and finish the running ones first, then disconnect the MCP servers.
  onShutdown({
    logger,
    deadlineMs: environment.GW_SHUTDOWN_TIMEOUT_MS,
    steps: [
      () => closeWorker(),
      () => core.close(),
      (deadline) => http.close(deadline),
      () => store.close(),
      async () => tracing?.shutdown(),
    ],
  });
});
