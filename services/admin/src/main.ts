import { GovernanceClient } from '@gw/governance';
import { RouterClient } from '@gw/router';
import {
  createLogger,
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
const app = createAdminApp({
  router,
  governance,
  logger,
  auth: {
    adminToken: process.env['GATEWAY_ADMIN_TOKEN'],
    allowAnonymous: config.client.allow_anonymous_admin,
  },
});
const http = await startHttpServer({
  port: envPort('GW_ADMIN_PORT', 8081),
  host: process.env['GW_HOST'] ?? '0.0.0.0',
  handlers: [app.handle],
});
logger.info({ port: http.port }, 'admin listening');

onShutdown(logger, [
  (deadline) => http.close(deadline),
  async () => {
    router.close();
    governance.close();
  },
]);
