import { GovernanceClient } from '@gw/governance/client';
import { McpRegistry } from '@gw/mcp-runner/control';
import { RouterClient } from '@gw/router/client';
import { adminEnvironmentSchema, createLogger, createMetrics, httpLimits, readSettings } from '@gw/shared';
import { grpcClientSettings } from '@gw/shared/grpc';
import { metricsHandler, onShutdown, startHttpServer, startService } from '@gw/shared/server';
import { createStore } from '@gw/shared/store';
import { composeAdmin } from './compose.ts';

const logger = createLogger({ service: 'admin' });
await startService(logger, async () => {
  const { environment, config } = await readSettings(adminEnvironmentSchema, process.env);
  logger.level = environment.LOG_LEVEL;
  const grpc = await grpcClientSettings(environment);
  const router = new RouterClient({
    ...grpc,
    address: environment.GW_ROUTER_ADDR,
    callDeadlineMs: environment.GW_ROUTER_CALL_DEADLINE_MS,
  });
  const governance = new GovernanceClient({ ...grpc, address: environment.GW_GOVERNANCE_ADDR });
  // MCP clients live in the store; admin edits them and reads the runners' reports, never connecting itself.
  const mcpStore = environment.REDIS_URL ? await createStore(environment) : undefined;
  const app = composeAdmin({
    config,
    router,
    governance,
    logger,
    adminToken: environment.GATEWAY_ADMIN_TOKEN,
    mcpRegistry: mcpStore && new McpRegistry({ store: mcpStore, logger }),
  });
  const http = await startHttpServer({
    port: environment.GW_ADMIN_PORT,
    host: environment.GW_HOST,
    handlers: [app.handle],
    limits: httpLimits(environment),
  });
  // /metrics (process metrics) on its own port, as the other services whose main port does not serve it.
  const metrics = createMetrics({ service: 'admin' });
  const metricsHttp = await startHttpServer({
    port: environment.GW_METRICS_PORT,
    host: environment.GW_HOST,
    handlers: [metricsHandler(metrics, environment.GW_METRICS_TOKEN)],
  });
  logger.info({ port: http.port, metricsPort: metricsHttp.port }, 'admin listening');
  onShutdown({
    logger,
    deadlineMs: environment.GW_SHUTDOWN_TIMEOUT_MS,
    steps: [
      (deadline) => http.close(deadline),
      (deadline) => metricsHttp.close(deadline),
      async () => {
        router.close();
        governance.close();
        await mcpStore?.close();
      },
    ],
  });
});
