import type { GovernanceService } from '@gw/governance';
import type { McpRegistry } from '@gw/mcp-runner/control';
import type { RouterService } from '@gw/router';
import type { GatewayConfig, Logger } from '@gw/shared';
import { createAdminApp } from './core/admin-app.ts';

/** The admin API of a gateway config: its one composition root, used by its main and by the embedded gateway. */
export function composeAdmin(options: {
  config: GatewayConfig;
  router: RouterService;
  governance: GovernanceService;
  logger: Logger;
  /** GATEWAY_ADMIN_TOKEN, injected by the process's main. */
  adminToken: string | undefined;
  mcpRegistry: McpRegistry | undefined;
}) {
  return createAdminApp({
    router: options.router,
    governance: options.governance,
    logger: options.logger,
    auth: { adminToken: options.adminToken, allowAnonymous: options.config.client.allow_anonymous_admin },
    mcp: { registry: options.mcpRegistry },
  });
}
