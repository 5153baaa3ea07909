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
  LiveSettings,
  type Logger,
  outboundPolicy,
  Probes,
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
  /** GW_SHUTDOWN_TIMEOUT_MS: how long disposing the gateway drains (`close(deadlineMs)` names its own). */
  drainMs?: number | undefined;
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
  // Everything started goes on this stack, so a start that fails releases what started before it, in reverse
  // order, and closing the gateway disposes it the same way: the server drains first, tracing goes last (the
  // spans of the drained requests are exported too).
  await using started = new AsyncDisposableStack();
  const metrics = createMetrics({ service: 'gateway' });
  // Requests refused for overload and spans or records dropped, per minute and reason (`/api/logs/dropped`).
  const tally = processDroppedTally();
  // One export queue; each service's spans under its own name, as in cluster mode (docs/tracing.md).
  const tracing = started.use(
    await startTracing({
      config: config.tracing,
      environmentEndpoint: options.otlpEndpoint,
      metrics,
      logger,
      onDropped: (count) => tally.add('trace_buffer_full', count),
    }),
  );
  const tracer = (service: string) => tracing?.tracer(service);
  // Secret-manager references (docs/vault.md), read before anything opens or uses them: one resolver for the
  // process, so a secret that cannot be read stops start-up with nothing left to release.
  const secrets = started.use(
    await startSecretResolver({
      config,
      environment: options.environment,
      logger,
      metrics,
      googleTokenSource: options.googleTokenSource,
    }),
  );
  const store = options.store ?? started.use(await MemoryStore.open({ dataDir: options.dataDir }));
  // Guardrails first: a condition of the config file that does not compile stops start-up before anything
  // else starts. The config file's are seeded into the store, where the admin API adds more.
  const guardrails = started.use(
    await GuardrailRuntime.start({
      config: config.guardrails,
      registry: new GuardrailRegistry({ store, logger }),
      logger,
      environment: options.environment,
      secrets,
      outbound: outboundPolicy(config.network),
    }),
  );
  // One set of live settings for every service: a change through the admin API (or the config file) replaces
  // them, and each service reads the ones in force at its next request. Restart-only ones are read here, once.
  const settings = LiveSettings.of(config);
  started.use(await followSystemSettings({ store, settings, logger }));
  const { cache: cacheSettings, mcp: mcpSettings } = settings.current();
  if (options.configPath)
    started.use(
      watchConfigFile({
        path: options.configPath,
        env: options.environment,
        logger,
        onChange: async (edited) => {
          await writeSystemSettings(store, systemSettingsOf(edited), { fromFile: true });
          // The load balancer's file settings apply where no document of the admin API replaces them.
          settings.loadBalancer.replace(edited.load_balancer);
        },
      }),
    );
  // Each service's own composition root, wired through the core interfaces (no loopback gRPC).
  const { environment } = options;
  // One health board for the router (which records) and governance (which weighs a key's provider configs).
  const health = started.use(
    await new HealthBoard({ config: settings.loadBalancer, store, logger, metrics }).start(),
  );
  const router = started.use(
    await startRouter({
      config,
      settings,
      store,
      logger,
      metrics,
      environment,
      health,
      tracer: tracer('router'),
      secrets,
      reportCalls: false,
    }),
  );
  const governance = started.use(
    await startGovernance({
      config,
      settings,
      store,
      logger,
      health,
      metrics,
      tracer: tracer('governance'),
    }),
  );
  // MCP: the runner core holds the connections; calls go through an in-process queue running the same
  // processor as the cluster's BullMQ workers; ingress filters against the catalog, admin edits the registry.
  const { registry: mcpRegistry, core: mcpRunner } = started.use(
    await startMcpRunner({
      config,
      settings,
      store,
      logger,
      runnerId: 'embedded',
      environment,
    }),
  );
  const mcpQueue = started.use(
    new InProcessToolQueue({
      runner: tracing ? traceToolRunner(mcpRunner, tracing.tracer('mcp-runner')) : mcpRunner,
      concurrency: mcpSettings.worker_concurrency,
      maxQueued: mcpSettings.max_queued,
    }),
  );
  const mcpCatalog = started.use(await McpCatalog.start({ registry: mcpRegistry, logger }));
  // The response cache, when enabled: entries in process, shared by ingress (lookups) and admin (removals).
  const cacheBackend = cacheSettings.enabled
    ? started.use(new MemoryCacheBackend({ maxEntriesPerScope: cacheSettings.max_entries_per_scope }))
    : undefined;
  // Request logs: request-logs.sqlite in the data directory, on a thread of its own; deleted by age hourly.
  const logStore = started.use(await SqliteLogStore.open({ dataDir: options.dataDir }));
  started.use(
    startLogRetention({
      store: logStore,
      retentionDays: () => settings.logs.current().retention_days,
      onError: (error) => logger.warn({ err: error }, 'request logs: retention failed'),
    }),
  );
  const tail = new LogTailHub();
  // The audit log: audit-log.sqlite in the data directory, a file of its own; kept forever (no retention).
  const auditStore = started.use(await SqliteAuditStore.open({ dataDir: options.dataDir }));
  // Nothing to wait for in one process: ready until it drains.
  const probes = started.use(new Probes());
  const ingress = composeIngress({
    settings,
    // The governance core is the ingress's admission here (it implements the port).
    admission: governance,
    router,
    logger,
    metrics,
    probes,
    mcp: { catalog: mcpCatalog, executor: mcpQueue },
    metricsToken: options.metricsToken,
    tracer: tracer('ingress'),
    guardrails,
    cacheBackend,
    logs: { sink: logStore, tally, onWritten: (records) => tail.publish(records) },
  });
  // Settles finish, and the records they complete are written, before the stores below close.
  started.defer(() => ingress.drain());
  // Alerts: evaluated in this process (no lease to take: it is the only one).
  const alerts = started.use(
    startAlerts({
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
    }),
  );
  const admin = composeAdmin({
    config,
    settings,
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
  // The audit records of the last answers are stored before the audit store closes.
  started.defer(() => admin.drainAudit());
  let drainMs = options.drainMs ?? 25_000;
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
  started.defer(() => http.close(drainMs));
  // First at shutdown: refuse new requests and end the admin's live connections, so the server can drain.
  started.defer(() => {
    probes.drain();
    admin.close();
  });
  const resources = started.move();
  return {
    port: http.port,
    metrics,
    /** Where request logs are kept (tests read it directly). */
    logStore,
    /** Drains in-flight requests and streams, then releases everything in reverse order of starting. */
    async close(deadlineMs = drainMs): Promise<void> {
      drainMs = deadlineMs;
      await resources.disposeAsync();
    },
    async [Symbol.asyncDispose](): Promise<void> {
      await resources.disposeAsync();
    },
  };
}
