// `pnpm start`: the whole gateway in one process, no external service needed.
import { createLogger, envPort, loadGatewayConfig, onShutdown } from '@gw/shared';
import { startEmbeddedGateway } from './embedded-gateway.ts';

const logger = createLogger({ service: 'gateway' });
try {
  const config = await loadGatewayConfig();
  const gateway = await startEmbeddedGateway({
    config,
    logger,
    port: envPort('PORT', 8080),
    host: process.env['GW_HOST'] ?? '0.0.0.0',
    dataDir: process.env['GATEWAY_DATA_DIR'] ?? './data',
    adminToken: process.env['GATEWAY_ADMIN_TOKEN'],
  });
  logger.info({ port: gateway.port, mode: 'embedded' }, 'gw listening');
  onShutdown(logger, [(deadline) => gateway.close(deadline)]);
} catch (error) {
  logger.fatal((error as Error).message);
  process.exit(1);
}
