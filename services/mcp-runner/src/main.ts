import { hostname } from 'node:os';
import {
  createLogger,
  createMetrics,
  followSystemSettings,
  LiveSettings,
  mcpRunnerEnvironmentSchema,
  otlpTracesEndpoint,
  Probes,
  storeCheck,
} from '@gw/shared';
import { metricsHandler, onShutdown, probesHandler, startHttpServer, startService } from '@gw/shared/server';
import { createStore } from '@gw/shared/store';
import { startTracing } from '@gw/shared/tracing';
import { createToolWorker } from './bullmq/tool-worker.ts';
import { startMcpRunner } from './compose.ts';
import { traceToolRunner } from './core/traced-tool-runner.ts';

const logger = createLogger({ service: 'mcp-runner' });
// Started in the order they are needed; at shutdown the stack disposes them in reverse: the metrics port
// closes, the worker stops taking jobs and finishes the running ones, then the MCP servers are disconnected.
const service = { logger, schema: mcpRunnerEnvironmentSchema, env: process.env };
await startService(service, async (resources, { environment, config }) => {
  const metrics = createMetrics({ service: 'mcp-runner' });
  const tracing = resources.use(
    await startTracing({
      config: config.tracing,
      environmentEndpoint: otlpTracesEndpoint(environment),
      metrics,
      logger,
    }),
  );
  const store = resources.use(await createStore(environment));
  const probes = resources.use(new Probes()).require('store', storeCheck(store));
  // The stored settings (`PUT /api/config`) as they are at start: how tool calls run is read once.
  const settings = LiveSettings.of(config);
  resources.use(await followSystemSettings({ store, settings, logger }));
  const runnerId = `${hostname()}:${process.pid}`;
  const { core } = resources.use(
    await startMcpRunner({
      config,
      settings,
      store,
      logger,
      runnerId,
      heartbeatMs: environment.GW_MCP_HEARTBEAT_MS,
      environment: process.env,
    }),
  );
  resources.use(
    createToolWorker({
      redisUrl: environment.REDIS_URL,
      redisPrefix: environment.GW_REDIS_PREFIX,
      runner: tracing ? traceToolRunner(core, tracing.tracer('mcp-runner')) : core,
      concurrency: environment.GW_MCP_CONCURRENCY ?? settings.mcp.current().worker_concurrency,
      lockDurationMs: environment.GW_MCP_LOCK_DURATION_MS,
      stalledIntervalMs: environment.GW_MCP_STALLED_INTERVAL_MS,
      name: `mcp-runner:${runnerId}`,
      logger,
    }),
  );
  // /metrics, and the probes (`/health/live`, `/health/ready`: the store answers).
  const http = resources.use(
    await startHttpServer({
      port: environment.GW_METRICS_PORT,
      host: environment.GW_HOST,
      handlers: [metricsHandler(metrics, environment.GW_METRICS_TOKEN), probesHandler(probes)],
      drainMs: environment.GW_SHUTDOWN_TIMEOUT_MS,
    }),
  );
  logger.info({ runner: runnerId, metricsPort: http.port }, 'mcp-runner working');
  onShutdown({ logger, deadlineMs: environment.GW_SHUTDOWN_TIMEOUT_MS, resources, probes });
});
