import { GovernanceClient } from '@gw/governance';
import { McpRegistry } from '@gw/mcp-runner/control';
import { RouterClient } from '@gw/router';
import {
  createLogger,
  createStore,
  envAddress,
  envPort,
  loadGatewayConfig,
  onShutdown,
  startHttpServer,
} from '@gw/shared';
import { createAdminApp } from './core/admin-app.ts';

const logger = createLogger({ service: 'admin' });
const config = await loadGatewayConfig();
const router = new RouterClient(envAddress('GW_ROUTER_ADDR'));
const governance = new GovernanceClient(envAddress('GW_GOVERNANCE_ADDR'));
// MCP clients live in the store; admin edits them and reads the runners' reports, never connecting itself.
const mcpStore = process.env['REDIS_URL'] ? await createStore(process.env) : undefined;
const app = createAdminApp({
  router,
  governance,
  logger,
  auth: {
    adminToken: process.env['GATEWAY_ADMIN_TOKEN'],
    allowAnonymous: config.client.allow_anonymous_admin,
  },
  mcp: { registry: mcpStore && new McpRegistry({ store: mcpStore, logger }) },
});
const http = await startHttpServer({
  port: envPort('GW_ADMIN_PORT', 9080),
  host: process.env['GW_HOST'] ?? '0.0.0.0',
  handlers: [app.handle],
});
logger.info({ port: http.port }, 'admin listening');

onShutdown(logger, [
  (deadline) => http.close(deadline),
  async () => {
    router.close();
    governance.close();
    await mcpStore?.close();
  },
]);
