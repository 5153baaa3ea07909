import { hostname } from 'node:os';
import {
  createLogger,
  createMetrics,
  createStore,
  envPort,
  loadGatewayConfig,
  metricsHandler,
  onShutdown,
  startHttpServer,
} from '@gw/shared';
import { McpRegistry } from './core/mcp-registry.ts';
import { McpRunnerCore } from './core/mcp-runner-core.ts';
import { createToolWorker } from './core/tool-queue.ts';

const logger = createLogger({ service: 'mcp-runner' });
const redisUrl = process.env['REDIS_URL'];
if (!redisUrl) {
  logger.fatal('REDIS_URL is not set: mcp-runner takes its jobs from BullMQ on Redis');
  process.exit(1);
}

function envNumber(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number <= 0)
    throw new Error(`${name}: '${value}' is not a positive integer`);
  return number;
}

const config = await loadGatewayConfig();
const prefix = process.env['GW_REDIS_PREFIX'] ?? 'gw:';
const store = await createStore(process.env);
const registry = new McpRegistry({ store, logger });
// Every runner seeds the config file's clients (idempotent): whichever starts first makes them known.
await registry.seed(config.mcp.clients);
const runnerId = `${hostname()}:${process.pid}`;
const core = await McpRunnerCore.start({
  registry,
  logger,
  settings: config.mcp,
  runnerId,
  heartbeatMs: envNumber('GW_MCP_HEARTBEAT_MS', 10_000),
});
const { close: closeWorker } = createToolWorker({
  redisUrl,
  redisPrefix: prefix,
  runner: core,
  concurrency: envNumber('GW_MCP_CONCURRENCY', config.mcp.worker_concurrency),
  lockDurationMs: envNumber('GW_MCP_LOCK_DURATION_MS', 30_000),
  stalledIntervalMs: envNumber('GW_MCP_STALLED_INTERVAL_MS', 30_000),
  name: `mcp-runner:${runnerId}`,
  logger,
});
// /metrics, and the port the orchestrator's probes check.
const metrics = createMetrics({ service: 'mcp-runner' });
const http = await startHttpServer({
  port: envPort('GW_METRICS_PORT', 0),
  host: process.env['GW_HOST'] ?? '0.0.0.0',
  handlers: [metricsHandler(metrics)],
});
logger.info({ runner: runnerId, metricsPort: http.port }, 'mcp-runner working');

// Stop taking jobs and finish the running ones first, then disconnect the MCP servers.
onShutdown(logger, [
  () => closeWorker(),
  () => core.close(),
  (deadline) => http.close(deadline),
  () => store.close(),
]);
