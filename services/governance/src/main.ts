import {
  createLogger,
  createMetrics,
  createStore,
  envPort,
  loadGatewayConfig,
  metricsHandler,
  onShutdown,
  startGrpcServer,
  startHttpServer,
  startService,
} from '@gw/shared';
import { GovernanceCore } from './core/governance-core.ts';
import { addGovernanceService } from './grpc/governance-server.ts';

const logger = createLogger({ service: 'governance' });

await startService(logger, async () => {
  const config = await loadGatewayConfig();
  const store = await createStore(process.env);
  const metrics = createMetrics({ service: 'governance' });
  const core = await GovernanceCore.start({
    store,
    logger,
    client: config.client,
    governance: config.governance,
  });
  const host = process.env['GW_HOST'] ?? '0.0.0.0';
  const grpc = await startGrpcServer({
    port: envPort('GW_GOVERNANCE_PORT', 7201),
    host,
    register: (server) => addGovernanceService(server, core),
  });
  const http = await startHttpServer({
    port: envPort('GW_METRICS_PORT', 0),
    host,
    handlers: [metricsHandler(metrics)],
  });
  logger.info({ grpcPort: grpc.port, metricsPort: http.port }, 'governance listening');

  onShutdown(logger, [
    (deadline) => grpc.close(deadline),
    (deadline) => http.close(deadline),
    () => core.close(),
    () => store.close(),
  ]);
});
