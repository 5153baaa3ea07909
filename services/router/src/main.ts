import { routerEnvironmentSchema } from '@gw/shared';
import { runGrpcService } from '@gw/shared/grpc';
import { startRouter } from './compose.ts';
import { addRouterService } from './grpc.ts';

await runGrpcService({
  service: 'router',
  environment: routerEnvironmentSchema,
  env: process.env,
  port: (environment) => environment.GW_ROUTER_PORT,
  createCore: startRouter,
  register: addRouterService,
});
