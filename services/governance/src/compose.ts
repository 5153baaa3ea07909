import { closeOnDispose, type GatewayConfig, type Logger, type Metrics } from '@gw/shared';
import { HealthBoard } from '@gw/shared/health';
import type { Store } from '@gw/shared/store';
import type { Tracer } from '@gw/shared/tracing';
import { GovernanceCore } from './core/governance-core.ts';
import type { GovernanceService } from './core/governance-service.ts';
import { TracedGovernance } from './core/traced-governance.ts';

/** Governance of a gateway config: its one composition root, used by its main and by the embedded gateway. */
export async function startGovernance(options: {
  config: GatewayConfig;
  store: Store;
  logger: Logger;
  /** `gw_cost_usd_total` is counted where requests are settled. */
  metrics?: Metrics;
  /**
   * Embedded mode: the router's health board. Without it governance reads the routers' shared windows from
   * the store, so weighted provider configs of a key follow the same health in every process.
   */
  health?: HealthBoard;
  /** Spans of authorize and settle; none when tracing is off. */
  tracer?: Tracer | undefined;
  /** A cluster's ingress: authorize and settle only (GovernanceCoreDependencies.admissionOnly). */
  admissionOnly?: boolean;
}): Promise<GovernanceService & { close(): Promise<void> } & AsyncDisposable> {
  const health =
    options.health ??
    (await new HealthBoard({
      config: options.config.load_balancer,
      store: options.store,
      share: { replicaId: 'governance', publish: false },
      logger: options.logger,
    }).start());
  const core = await GovernanceCore.start({
    store: options.store,
    logger: options.logger,
    client: options.config.client,
    governance: options.config.governance,
    health,
    ownsHealth: options.health === undefined,
    metrics: options.metrics,
    admissionOnly: options.admissionOnly,
  });
  return closeOnDispose(options.tracer ? new TracedGovernance(core, options.tracer) : core);
}
