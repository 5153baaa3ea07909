import { createAdminApp } from '@gw/admin';
import { GovernanceCore } from '@gw/governance';
import { createIngressApp } from '@gw/ingress';
import { InProcessToolQueue, McpCatalog, McpRegistry, McpRunnerCore } from '@gw/mcp-runner';
import { RouterCore } from '@gw/router';
import {
  createMetrics,
  type GatewayConfig,
  type Logger,
  MemoryStore,
  type Store,
  startHttpServer,
} from '@gw/shared';

export interface EmbeddedGatewayOptions {
  config: GatewayConfig;
  logger: Logger;
  port: number;
  host: string;
  dataDir: string;
  adminToken?: string | undefined;
  /** A store to use instead of the data directory's (tests). */
  store?: Store;
}

/**
 * Embedded mode (DESIGN.md §3): every service in one process, wired through their core interfaces with no
 * loopback gRPC, state in a MemoryStore persisted to the data directory. Ingress and admin share one port.
 */
export async function startEmbeddedGateway(options: EmbeddedGatewayOptions) {
  const { config, logger } = options;
  const store = options.store ?? (await MemoryStore.open({ dataDir: options.dataDir }));
  const metrics = createMetrics({ service: 'gateway' });
  const router = await RouterCore.start({
    store,
    logger,
    metrics,
    seedProviders: config.providers,
    sendRawResponse: config.client.send_raw_response,
  });
  const governance = await GovernanceCore.start({
    store,
    logger,
    client: config.client,
    governance: config.governance,
  });
  // MCP: the runner core holds the connections; calls go through an in-process queue running the same
  // processor as the cluster's BullMQ workers; ingress filters against the catalog, admin edits the registry.
  const mcpRegistry = new McpRegistry({ store, logger });
  await mcpRegistry.seed(config.mcp.clients);
  const mcpRunner = await McpRunnerCore.start({
    registry: mcpRegistry,
    logger,
    settings: config.mcp,
    runnerId: 'embedded',
  });
  const mcpQueue = new InProcessToolQueue({
    runner: mcpRunner,
    concurrency: config.mcp.worker_concurrency,
    maxQueued: config.mcp.max_queued,
  });
  const mcpCatalog = await McpCatalog.start({ registry: mcpRegistry, logger });
  let draining = false;
  const ingress = createIngressApp({
    governance,
    router,
    logger,
    metrics,
    client: config.client,
    isDraining: () => draining,
    mcp: { catalog: mcpCatalog, executor: mcpQueue, settings: config.mcp },
  });
  const admin = createAdminApp({
    router,
    governance,
    logger,
    auth: { adminToken: options.adminToken, allowAnonymous: config.client.allow_anonymous_admin },
    mcp: { registry: mcpRegistry },
  });
  const http = await startHttpServer({
    port: options.port,
    host: options.host,
    handlers: [ingress.handle, admin.handle],
    // HTTP/1.1 and cleartext HTTP/2 on one port (the Bedrock SDK speaks h2c by default).
    http2: true,
  });
  return {
    port: http.port,
    metrics,
    /** Drains in-flight requests and streams, then releases everything. */
    async close(deadlineMs = 25_000): Promise<void> {
      draining = true;
      await http.close(deadlineMs);
      await ingress.drain();
      await mcpQueue.close();
      await mcpCatalog.close();
      await mcpRunner.close();
      await governance.close();
      await router.close();
      if (!options.store) await store.close();
    },
  };
}
