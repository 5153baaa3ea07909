import { GovernanceClient } from '@gw/governance';
import { BullToolQueue, McpCatalog, McpRegistry } from '@gw/mcp-runner/control';
import { RouterClient } from '@gw/router';
import {
  createLogger,
  createMetrics,
  createStore,
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
// Requests without a virtual key are decided here from the shared client settings: no governance hop.
const governance = new GovernanceClient(envAddress('GW_GOVERNANCE_ADDR'), {
  anonymousLocally: config.client,
});
const router = new RouterClient(envAddress('GW_ROUTER_ADDR'));
// MCP in cluster mode: the catalog follows the store, calls go to mcp-runner workers through BullMQ. Ingress
// never connects to an MCP server itself.
const redisUrl = process.env['REDIS_URL'];
const mcpStore = redisUrl ? await createStore(process.env) : undefined;
const mcpCatalog = mcpStore
  ? await McpCatalog.start({ registry: new McpRegistry({ store: mcpStore, logger }), logger })
  : undefined;
const mcpQueue = redisUrl
  ? await BullToolQueue.open({
      redisUrl,
      redisPrefix: process.env['GW_REDIS_PREFIX'] ?? 'gw:',
      maxQueued: config.mcp.max_queued,
      toolTimeoutMs: config.mcp.tool_timeout_ms,
    })
  : undefined;
let draining = false;
const app = createIngressApp({
  governance,
  router,
  logger,
  metrics,
  client: config.client,
  isDraining: () => draining,
  mcp: mcpCatalog && mcpQueue && { catalog: mcpCatalog, executor: mcpQueue, settings: config.mcp },
});
const http = await startHttpServer({
  port: envPort('PORT', 8080),
  host: process.env['GW_HOST'] ?? '0.0.0.0',
  handlers: [app.handle],
  // HTTP/1.1 and cleartext HTTP/2 on one port (the Bedrock SDK speaks h2c by default).
  http2: true,
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
    await mcpQueue?.close();
    await mcpCatalog?.close();
    await mcpStore?.close();
  },
]);
