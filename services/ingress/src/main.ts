import { GovernanceClient } from '@gw/governance';
import { RouterClient } from '@gw/router';
import {
  createLogger,
  createMetrics,
  envAddress,
  envPort,
  loadGatewayConfig,
  onShutdown,
  startHttpServer,
} from '@gw/shared';
import { createIngressApp } from './core/ingress-app.ts';

const logger = createLogger({ service: 'ingress' });
const config = await loadGatewayConfig();
const metrics = createMetrics({ service: 'ingress' });
const governance = new GovernanceClient(envAddress('GW_GOVERNANCE_ADDR'));
const router = new RouterClient(envAddress('GW_ROUTER_ADDR'));
let draining = false;
const app = createIngressApp({
  governance,
  router,
  logger,
  metrics,
  client: config.client,
  isDraining: () => draining,
});
const http = await startHttpServer({
  port: envPort('PORT', 8080),
  host: process.env['GW_HOST'] ?? '0.0.0.0',
  handlers: [app.handle],
});
logger.info({ port: http.port }, 'ingress listening');

onShutdown(logger, [
  async (deadline) => {
    draining = true;
    await http.close(deadline);
    await app.drain();
  },
  async () => {
    governance.close();
    router.close();
  },
]);
