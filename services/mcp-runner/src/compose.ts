import { type GatewayConfig, type LiveSettings, type Logger, outboundPolicy } from '@gw/shared';
import type { Store } from '@gw/shared/store';
import { McpRegistry } from './core/mcp-registry.ts';
import { McpRunnerCore } from './core/mcp-runner-core.ts';

/**
 * An MCP runner of a gateway config: its one composition root, used by its main (behind BullMQ workers) and by
 * the embedded gateway (behind the in-process queue). Every runner seeds the config file's clients
 * (idempotent): whichever starts first makes them known.
 */
export async function startMcpRunner(options: {
  config: GatewayConfig;
  /** The live settings: how tool calls run is read from them at start (restart-only settings). */
  settings: LiveSettings;
  store: Store;
  logger: Logger;
  runnerId: string;
  heartbeatMs?: number;
  /** Where stdio clients' `envs` values come from (the process's environment, injected by main). */
  environment: NodeJS.ProcessEnv;
}): Promise<{ registry: McpRegistry; core: McpRunnerCore } & AsyncDisposable> {
  const { config, logger } = options;
  const registry = new McpRegistry({ store: options.store, logger });
  await registry.seed(config.mcp.clients);
  const core = await McpRunnerCore.start({
    registry,
    logger,
    settings: options.settings.mcp.current(),
    runnerId: options.runnerId,
    environment: options.environment,
    reseed: () => registry.seed(config.mcp.clients),
    outbound: outboundPolicy(config.network),
    ...(options.heartbeatMs ? { heartbeatMs: options.heartbeatMs } : {}),
  });
  // Disposing the runner disconnects its MCP servers; the registry is the store's.
  return { registry, core, [Symbol.asyncDispose]: () => core.close() };
}
