import { composeAdmin } from '@gw/admin';
import { governanceBudgetSource, localLease, startAlerts } from '@gw/alerts';
import { MemoryCacheBackend } from '@gw/cache';
import { startGovernance } from '@gw/governance';
import { GuardrailRegistry, GuardrailRuntime } from '@gw/guardrails/registry';
import { composeIngress, countServerDrops, processDroppedTally } from '@gw/ingress';
import { LogTailHub, startLogRetention } from '@gw/logs';
import { SqliteLogStore } from '@gw/logs/sqlite';
import { SqliteAuditStore } from '@gw/logs/sqlite-audit';
import { InProcessToolQueue, McpCatalog, startMcpRunner, traceToolRunner } from '@gw/mcp-runner';
import { startRouter } from '@gw/router';
import {
  ConfigError,
  createMetrics,
  followSystemSettings,
  type GatewayConfig,
  type Logger,
  outboundPolicy,
  resolveSecret,
  systemSettingsOf,
  watchConfigFile,
  writeSystemSettings,
} from '@gw/shared';
import { HealthBoard } from '@gw/shared/health';
import { type HttpLimits, startHttpServer } from '@gw/shared/server';
import { MemoryStore, type Store } from '@gw/shared/store';
import { startTracing } from '@gw/shared/tracing';
import { startSecretResolver } from '@gw/vault';

export interface EmbeddedGatewayOptions {
  config: GatewayConfig;
  logger: Logger;
  port: number;
  host: string;
  dataDir: string;
  /** GATEWAY_ADMIN_TOKEN: `Authorization: Bearer <it>` on `/api/*` acts as Admin. */
  adminToken?: string | undefined;
  /** GW_OIDC_CLIENT_SECRET: single sign-on's client secret (`auth.oidc`); a public client without it. */
  oidcClientSecret?: string | undefined;
  /** GW_SCIM_TOKEN: the bearer token of `/scim/v2` (docs/scim.md); unset, SCIM answers 503. */
  scimToken?: string | undefined;
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
  /** GATEWAY_CONFIG: watched, so an edit of its system settings applies without a restart. */
  configPath?: string | undefined;
  /** The traces URL the environment names (`otlpTracesEndpoint`); the config's `tracing.endpoint` wins. */
  otlpEndpoint?: string | undefined;
  /** Google access tokens for `gcp-sm.` references instead of application default credentials (tests). */
  googleTokenSource?: (() => Promise<string>) | undefined;
}

/**
 * Embedded mode (docs/architecture.md "Every hop, both modes"): every service in one process, wired through their core interfaces with no
 * loopback gRPC, state in a MemoryStore persisted to the data directory. Ingress and admin share one port.
 */
export async function startEmbeddedGateway(options: EmbeddedGatewayOptions) {
  const { config, logger } = options;
  if (config.audit.on_store_failure === 'queue')
    throw new ConfigError(
      "audit.on_store_failure: queue keeps audit records in a cluster's Redis, and the embedded gateway has none; use refuse",
    );
  const metrics = createMetrics({ service: 'gateway' });
  // Secret-manager references (docs/vault.md), read before anything opens or uses them: one resolver for the
  // process, so a secret that cannot be read stops start-up with nothing left to release.
  const secrets = await startSecretResolver({
    config,
    environment: options.environment,
    logger,
    metrics,
    googleTokenSource: options.googleTokenSource,
  });
  const store = options.store ?? (await MemoryStore.open({ dataDir: options.dataDir }));
  // Requests refused for overload and spans or records dropped, per minute and reason (`/api/logs/dropped`).
  const tally = processDroppedTally();
  // Guardrails first: a condition of the config file that does not compile stops start-up before anything
  // else starts. The config file's are seeded into the store, where the admin API adds more.
  const guardrails = await GuardrailRuntime.start({
    config: config.guardrails,
    registry: new GuardrailRegistry({ store, logger }),
    logger,
    environment: options.environment,
    secrets,
    outbound: outboundPolicy(config.network),
  });
  // One config object for every service: settings changed through the admin API apply to it in place.
  const settings = await followSystemSettings({ store, config, logger });
  const watcher =
    options.configPath &&
    watchConfigFile({
      path: options.configPath,
      env: options.environment,
      logger,
      onChange: async (edited) => {
        await writeSystemSettings(store, systemSettingsOf(edited), { fromFile: true });
        // The load balancer's file settings apply where no document of the admin API replaces them.
        Object.assign(config.load_balancer, edited.load_balancer);
      },
    });
  // One export queue; each service's spans under its own name, as in cluster mode (docs/tracing.md).
  const tracing = await startTracing({
    config: config.tracing,
    environmentEndpoint: options.otlpEndpoint,
    metrics,
    logger,
    onDropped: (count) => tally.add('trace_buffer_full', count),
  });
  const tracer = (service: string) => tracing?.tracer(service);
  // Each service's own composition root, wired through the core interfaces (no loopback gRPC).
  const { environment } = options;
  // One health board for the router (which records) and governance (which weighs a key's provider configs).
  const health = await new HealthBoard({ config: config.load_balancer, store, logger, metrics }).start();
  const router = await startRouter({
    config,
    store,
    logger,
    metrics,
    environment,
    health,
    tracer: tracer('router'),
    secrets,
  });
  const governance = await startGovernance({
    config,
    store,
    logger,
    health,
    metrics,
    tracer: tracer('governance'),
  });
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
    runner: tracing ? traceToolRunner(mcpRunner, tracing.tracer('mcp-runner')) : mcpRunner,
    concurrency: config.mcp.worker_concurrency,
    maxQueued: config.mcp.max_queued,
  });
  const mcpCatalog = await McpCatalog.start({ registry: mcpRegistry, logger });
  // The response cache, when enabled: entries in process, shared by ingress (lookups) and admin (removals).
  const cacheBackend = config.cache.enabled
    ? new MemoryCacheBackend({ maxEntriesPerScope: config.cache.max_entries_per_scope })
    : undefined;
  // Request logs: request-logs.sqlite in the data directory, on a thread of its own; deleted by age hourly.
  const logStore = await SqliteLogStore.open({ dataDir: options.dataDir });
  const retention = startLogRetention({
    store: logStore,
    retentionDays: () => config.logs.retention_days,
    onError: (error) => logger.warn({ err: error }, 'request logs: retention failed'),
  });
  const tail = new LogTailHub();
  // The audit log: audit-log.sqlite in the data directory, a file of its own; kept forever (no retention).
  const auditStore = await SqliteAuditStore.open({ dataDir: options.dataDir });
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
    tracer: tracer('ingress'),
    guardrails,
    cacheBackend,
    logs: { sink: logStore, tally, onWritten: (records) => tail.publish(records) },
  });
  // Alerts: evaluated in this process (no lease to take: it is the only one).
  const alerts = startAlerts({
    store,
    config: config.alerts,
    lease: localLease,
    sources: {
      health: router,
      budgets: governanceBudgetSource((request) => governance.manage(request)),
      logs: logStore,
      dropped: logStore,
    },
    secretFailures: secrets,
    logger,
    onOutcome: (channelType, outcome) =>
      metrics.alertNotifications.inc({ channel_type: channelType, outcome }),
    outbound: outboundPolicy(config.network),
    readSecret: (value) => resolveSecret(value, options.environment, secrets),
  });
  const admin = composeAdmin({
    config,
    router,
    governance,
    logger,
    adminToken: options.adminToken,
    oidcClientSecret: options.oidcClientSecret,
    scimToken: options.scimToken,
    mcpRegistry,
    store,
    cacheBackend,
    alerts,
    vault: { resolver: secrets },
    logs: { store: logStore, tail },
    audit: { store: auditStore, onFailure: () => metrics.auditAppendFailures.inc() },
  });
  const http = await startHttpServer({
    port: options.port,
    host: options.host,
    handlers: [ingress.handle, admin.handle],
    upgrades: [admin.upgrade],
    onDropped: countServerDrops(metrics, tally),
    // HTTP/1.1 and cleartext HTTP/2 on one port (the Bedrock SDK speaks h2c by default).
    http2: true,
    ...(options.limits && { limits: options.limits }),
  });
  return {
    port: http.port,
    metrics,
    /** Where request logs are kept (tests read it directly). */
    logStore,
    /** Drains in-flight requests and streams, then releases everything. */
    async close(deadlineMs = 25_000): Promise<void> {
      draining = true;
      if (watcher) watcher.close();
      admin.close();
      await http.close(deadlineMs);
      await admin.drainAudit();
      await auditStore.close();
      await ingress.drain();
      await alerts.close();
      await retention.stop();
      await logStore.close();
      await guardrails.close();
      await mcpQueue.close();
      await mcpCatalog.close();
      await mcpRunner.close();
      await governance.close();
      await router.close();
      await health.close();
      await settings.close();
      await cacheBackend?.close();
      await secrets.close();
      if (!options.store) await store.close();
      await tracing?.shutdown();
    },
  };
}
