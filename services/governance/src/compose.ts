import type { GatewayConfig, Logger } from '@gw/shared';
import type { Store } from '@gw/shared/store';
import { GovernanceCore } from './core/governance-core.ts';

/** Governance of a gateway config: its one composition root, used by its main and by the embedded gateway. */
export function startGovernance(options: {
  config: GatewayConfig;
  store: Store;
  logger: Logger;
}): Promise<GovernanceCore> {
  return GovernanceCore.start({
    store: options.store,
    logger: options.logger,
    client: options.config.client,
    governance: options.config.governance,
  });
}
