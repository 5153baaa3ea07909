import { GovernanceClient } from '@gw/governance/client';
import { McpRegistry } from '@gw/mcp-runner/control';
import { RouterClient } from '@gw/router/client';
import { adminEnvironmentSchema, createLogger, loadGatewayConfig, readEnvironment } from '@gw/shared';
import { onShutdown, startHttpServer, startService } from '@gw/shared/server';
import { createStore } from '@gw/shared/store';
import { composeAdmin } from './compose.ts';

const logger = createLogger({ service: 'admin' });
await startService(logger, async () => {
  const environment = readEnvironment(adminEnvironmentSchema);
  logger.level = environment.LOG_LEVEL;
  const config = await loadGatewayConfig();
  const router = new RouterClient(environment.GW_ROUTER_ADDR);
  const governance = new GovernanceClient(environment.GW_GOVERNANCE_ADDR);
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
  });
  logger.info({ port: http.port }, 'admin listening');
  onShutdown({
    logger,
    deadlineMs: environment.GW_SHUTDOWN_TIMEOUT_MS,
    steps: [
      (deadline) => http.close(deadline),
      async () => {
        router.close();
        governance.close();
        await mcpStore?.close();
      },
    ],
  });
});
