import { governanceEnvironmentSchema } from '@gw/shared';
import { runGrpcService } from '@gw/shared/grpc';
import { startGovernance } from './compose.ts';
import { addGovernanceService } from './grpc.ts';

await runGrpcService({
  service: 'governance',
  environment: governanceEnvironmentSchema,
  env: process.env,
  port: (environment) => environment.GW_GOVERNANCE_PORT,
  createCore: startGovernance,
  register: addGovernanceService,
});
