import { GovernanceClient } from '@gw/governance/client';
import { BullToolQueue } from '@gw/mcp-runner/bullmq';
import { McpCatalog, McpRegistry } from '@gw/mcp-runner/control';
import { RouterClient } from '@gw/router/client';
import {
  createLogger,
  createMetrics,
  exposureWarning,
  httpLimits,
  ingressEnvironmentSchema,
  readSettings,
} from '@gw/shared';
import { grpcClientSettings } from '@gw/shared/grpc';
import { onShutdown, startHttpServer, startService } from '@gw/shared/server';
import { createStore } from '@gw/shared/store';
import { composeIngress } from './compose.ts';

const logger = createLogger({ service: 'ingress' });
await startService(logger, async () => {
  const { environment, config } = await readSettings(ingressEnvironmentSchema, process.env);
  logger.level = environment.LOG_LEVEL;
  const metrics = createMetrics({ service: 'ingress' });
  const grpc = await grpcClientSettings(environment);
  // Requests without a virtual key are decided here from the shared client settings: no governance hop.
  const governance = new GovernanceClient(
    { ...grpc, address: environment.GW_GOVERNANCE_ADDR },
    { anonymousLocally: config.client },
  );
  const router = new RouterClient({
    ...grpc,
    address: environment.GW_ROUTER_ADDR,
    callDeadlineMs: environment.GW_ROUTER_CALL_DEADLINE_MS,
  });
  // MCP in cluster mode: the catalog follows the store, calls go to mcp-runner workers through BullMQ. Ingress
  // never connects to an MCP server itself.
  const redisUrl = environment.REDIS_URL;
  const mcpStore = redisUrl ? await createStore(environment) : undefined;
  const mcpCatalog = mcpStore
    ? await McpCatalog.start({ registry: new McpRegistry({ store: mcpStore, logger }), logger })
    : undefined;
  const mcpQueue = redisUrl
    ? await BullToolQueue.open({
        redisUrl,
        redisPrefix: environment.GW_REDIS_PREFIX,
        maxQueued: config.mcp.max_queued,
        toolTimeoutMs: config.mcp.tool_timeout_ms,
      })
    : undefined;
  let draining = false;
  const app = composeIngress({
    config,
    governance,
    router,
    logger,
    metrics,
    isDraining: () => draining,
    metricsToken: environment.GW_METRICS_TOKEN,
    mcp: mcpCatalog && mcpQueue && { catalog: mcpCatalog, executor: mcpQueue },
  });
  const http = await startHttpServer({
    port: environment.PORT,
    host: environment.GW_HOST,
    handlers: [app.handle],
    // HTTP/1.1 and cleartext HTTP/2 on one port (the Bedrock SDK speaks h2c by default).
    http2: true,
    limits: httpLimits(environment),
  });
  logger.info({ port: http.port }, 'ingress listening');
  const exposed = exposureWarning(environment.GW_HOST, config.client);
  if (exposed) logger.warn(exposed);
  onShutdown({
    logger,
    deadlineMs: environment.GW_SHUTDOWN_TIMEOUT_MS,
    steps: [
      async (deadline) => {
        draining = true;
        await http.close(deadline);
        await app.drain();
      },
      async () => {
        governance.close();
        router.close();
        await mcpQueue?.close();
        await mcpCatalog?.close();
        await mcpStore?.close();
      },
    ],
  });
});
