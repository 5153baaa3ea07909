import { composeAdmin } from '@gw/admin';
import { startGovernance } from '@gw/governance';
import { composeIngress } from '@gw/ingress';
import { InProcessToolQueue, McpCatalog, startMcpRunner } from '@gw/mcp-runner';
import { startRouter } from '@gw/router';
import { createMetrics, type GatewayConfig, type Logger } from '@gw/shared';
import { type HttpLimits, startHttpServer } from '@gw/shared/server';
import { MemoryStore, type Store } from '@gw/shared/store';

export interface EmbeddedGatewayOptions {
  config: GatewayConfig;
  logger: Logger;
  port: number;
  host: string;
  dataDir: string;
  /** GATEWAY_ADMIN_TOKEN: `Authorization: Bearer <it>` on `/api/*` acts as Admin. */
  adminToken?: string | undefined;
  /**
   * The process's environment, injected by main: where `env.NAME` references of provider keys and stdio MCP
   * clients' `envs` resolve. Nothing below reads process.env.
   */
  environment: NodeJS.ProcessEnv;
  /** A store to use instead of the data directory's (tests). */
  store?: Store;
  /** Timeouts and the connection cap of the HTTP port (`httpLimits` of the environment); defaults otherwise. */
  limits?: Partial<HttpLimits>;
  /** GW_METRICS_TOKEN: when set, `/metrics` answers only its bearer. */
  metricsToken?: string | undefined;
}

/**
 * Embedded mode (DESIGN.md §3): every service in one process, wired through their core interfaces with no
 * loopback gRPC, state in a MemoryStore persisted to the data directory. Ingress and admin share one port.
 */
export async function startEmbeddedGateway(options: EmbeddedGatewayOptions) {
  const { config, logger } = options;
  const store = options.store ?? (await MemoryStore.open({ dataDir: options.dataDir }));
  const metrics = createMetrics({ service: 'gateway' });
  // Each service's own composition root, wired through the core interfaces (no loopback gRPC).
  const { environment } = options;
  const router = await startRouter({ config, store, logger, metrics, environment });
  const governance = await startGovernance({ config, store, logger });
  // MCP: the runner core holds the connections; calls go through an in-process queue running the same
  // processor as the cluster's BullMQ workers; ingress filters against the catalog, admin edits the registry.
  const { registry: mcpRegistry, core: mcpRunner } = await startMcpRunner({
    config,
    store,
    logger,
    runnerId: 'embedded',
    environment,
  });
  const mcpQueue = new InProcessToolQueue({
    runner: mcpRunner,
    concurrency: config.mcp.worker_concurrency,
    maxQueued: config.mcp.max_queued,
  });
  const mcpCatalog = await McpCatalog.start({ registry: mcpRegistry, logger });
  let draining = false;
  const ingress = composeIngress({
    config,
    governance,
    router,
    logger,
    metrics,
    isDraining: () => draining,
    mcp: { catalog: mcpCatalog, executor: mcpQueue },
    metricsToken: options.metricsToken,
  });
  const admin = composeAdmin({
    config,
    router,
    governance,
    logger,
    adminToken: options.adminToken,
    mcpRegistry,
  });
  const http = await startHttpServer({
    port: options.port,
    host: options.host,
    handlers: [ingress.handle, admin.handle],
    // HTTP/1.1 and cleartext HTTP/2 on one port (the Bedrock SDK speaks h2c by default).
    http2: true,
    ...(options.limits && { limits: options.limits }),
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
