import type { GovernanceService } from '@gw/governance';
import type { McpCatalog, ToolExecutor } from '@gw/mcp-runner/control';
import type { RouterService } from '@gw/router';
import type { GatewayConfig, Logger, Metrics } from '@gw/shared';
import { createIngressApp } from './core/ingress-app.ts';

/** Ingress of a gateway config: its one composition root, used by its main and by the embedded gateway. */
export function composeIngress(options: {
  config: GatewayConfig;
  governance: GovernanceService;
  router: RouterService;
  logger: Logger;
  metrics: Metrics;
  isDraining: () => boolean;
  /** The MCP catalog and the queue that runs tool calls; none when this ingress has no MCP. */
  mcp: { catalog: McpCatalog; executor: ToolExecutor } | undefined;
  /** GW_METRICS_TOKEN: when set, `/metrics` answers only its bearer. */
  metricsToken?: string | undefined;
}) {
  const { config, mcp } = options;
  return createIngressApp({
    governance: options.governance,
    router: options.router,
    logger: options.logger,
    metrics: options.metrics,
    client: config.client,
    isDraining: options.isDraining,
    mcp: mcp && { ...mcp, settings: config.mcp },
    metricsToken: options.metricsToken,
  });
}
