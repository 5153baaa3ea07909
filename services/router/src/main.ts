import { runGrpcService } from '@gw/shared';
import { RouterCore } from './core/router-core.ts';
import { addRouterService } from './grpc/router-server.ts';

await runGrpcService<RouterCore>({
  service: 'router',
  portVariable: 'GW_ROUTER_PORT',
  defaultPort: 7101,
  createCore: ({ config, store, metrics, logger }) =>
    RouterCore.start({
      store,
      logger,
      metrics,
      seedProviders: config.providers,
      sendRawResponse: config.client.send_raw_response,
    }),
  register: addRouterService,
});
