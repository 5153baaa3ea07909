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
import { RouterCore } from './core/router-core.ts';
import { addRouterService } from './grpc/router-server.ts';

const logger = createLogger({ service: 'router' });

await startService(logger, async () => {
  const config = await loadGatewayConfig();
  const store = await createStore(process.env);
  const metrics = createMetrics({ service: 'router' });
  const core = await RouterCore.start({
    store,
    logger,
    metrics,
    seedProviders: config.providers,
    sendRawResponse: config.client.send_raw_response,
  });
  const host = process.env['GW_HOST'] ?? '0.0.0.0';
  const grpc = await startGrpcServer({
    port: envPort('GW_ROUTER_PORT', 7101),
    host,
    register: (server) => addRouterService(server, core),
  });
  const http = await startHttpServer({
    port: envPort('GW_METRICS_PORT', 0),
    host,
    handlers: [metricsHandler(metrics)],
  });
  logger.info({ grpcPort: grpc.port, metricsPort: http.port }, 'router listening');

  onShutdown(logger, [
    (deadline) => grpc.close(deadline),
    (deadline) => http.close(deadline),
    () => core.close(),
    () => store.close(),
  ]);
});
