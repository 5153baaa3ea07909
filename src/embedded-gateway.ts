import { createAdminApp } from '@gw/admin';
import { GovernanceCore } from '@gw/governance';
import { createIngressApp } from '@gw/ingress';
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
  let draining = false;
  const ingress = createIngressApp({
    governance,
    router,
    logger,
    metrics,
    client: config.client,
    isDraining: () => draining,
  });
  const admin = createAdminApp({
    router,
    governance,
    logger,
    auth: { adminToken: options.adminToken, allowAnonymous: config.client.allow_anonymous_admin },
  });
  const http = await startHttpServer({
    port: options.port,
    host: options.host,
    handlers: [ingress.handle, admin.handle],
  });
  return {
    port: http.port,
    metrics,
    /** Drains in-flight requests and streams, then releases everything. */
    async close(deadlineMs = 25_000): Promise<void> {
      draining = true;
      await http.close(deadlineMs);
      await ingress.drain();
      await governance.close();
      await router.close();
      if (!options.store) await store.close();
    },
  };
}
