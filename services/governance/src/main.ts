import { runGrpcService } from '@gw/shared';
import { GovernanceCore } from './core/governance-core.ts';
import { addGovernanceService } from './grpc/governance-server.ts';

await runGrpcService<GovernanceCore>({
  service: 'governance',
  portVariable: 'GW_GOVERNANCE_PORT',
  defaultPort: 7201,
  createCore: ({ config, store, logger }) =>
    GovernanceCore.start({ store, logger, client: config.client, governance: config.governance }),
  register: addGovernanceService,
});
