import { setTimeout as sleep } from 'node:timers/promises';
import { governanceBudgetSource, startAlerts } from '@gw/alerts';
import { RedisLease } from '@gw/alerts/redis';
import { RedisCacheBackend } from '@gw/cache/redis';
import { GovernanceClient } from '@gw/governance/client';
import { PostgresAuditStore } from '@gw/logs/postgres-audit';
import { RedisAuditQueue, startAuditQueueDrain } from '@gw/logs/redis-audit';
import { McpRegistry } from '@gw/mcp-runner/control';
import { RouterClient } from '@gw/router/client';
import {
  adminEnvironmentSchema,
  ConfigError,
  closeOnDispose,
  createLogger,
  createMetrics,
  followSystemSettings,
  httpLimits,
  LiveSettings,
  outboundPolicy,
  Probes,
  resolveSecret,
  storeCheck,
  throttledLog,
} from '@gw/shared';
import { grpcClientSettings } from '@gw/shared/grpc';
import { metricsHandler, onShutdown, probesHandler, startHttpServer, startService } from '@gw/shared/server';
import { connectRedis, createStore } from '@gw/shared/store';
import { followSecretFailures, publishVaultRefresh, startSecretResolver } from '@gw/vault';
import { composeAdmin } from './compose.ts';
import { startLogWorker } from './log-worker.ts';

const logger = createLogger({ service: 'admin' });
const service = { logger, schema: adminEnvironmentSchema, env: process.env };
// Started in the order they are needed; at shutdown the stack disposes them in reverse: the servers drain, the
// audit records of the last answers are stored, then alerts, logs, clients and connections are released.
await startService(service, async (resources, { environment, config }) => {
  const drainMs = environment.GW_SHUTDOWN_TIMEOUT_MS;
  const metrics = createMetrics({ service: 'admin' });
  // The response cache's entries, for removals only: this process keeps no index of them.
  if (config.cache.enabled && !environment.REDIS_URL) {
    throw new ConfigError('cache.enabled: a cluster keeps cache entries in Redis, and REDIS_URL is not set');
  }
  const cacheBackend =
    config.cache.enabled && environment.REDIS_URL
      ? resources.use(
          await RedisCacheBackend.connect({
            url: environment.REDIS_URL,
            prefix: environment.GW_REDIS_PREFIX,
            commandTimeoutMs: environment.GW_REDIS_COMMAND_TIMEOUT_MS,
            followChanges: false,
            onError: (error) => logger.warn({ err: error }, 'cache: Redis'),
          }),
        )
      : undefined;
  // MCP clients live in the store; admin edits them and reads the runners' reports, never connecting itself.
  const mcpStore = environment.REDIS_URL ? resources.use(await createStore(environment)) : undefined;
  // Ready when the store answers; draining from SIGTERM on (docs/kubernetes.md "Probes").
  const probes = resources.use(new Probes());
  if (mcpStore) probes.require('store', storeCheck(mcpStore));
  // `/api/vault/*`: this process reads the references too (its status, alert channels' credentials), and a
  // refresh reaches the others.
  const secrets = resources.use(
    await startSecretResolver({
      config,
      environment: process.env,
      logger,
      metrics,
      store: mcpStore,
    }),
  );
  const settings = LiveSettings.of(config);
  if (mcpStore) resources.use(await followSystemSettings({ store: mcpStore, settings, logger }));
  const grpc = {
    ...(await grpcClientSettings(environment)),
    observe: (method: string, seconds: number) => metrics.grpcClientDuration.observe({ method }, seconds),
  };
  const governance = resources.use(
    closeOnDispose(new GovernanceClient({ ...grpc, address: environment.GW_GOVERNANCE_ADDR })),
  );
  const router = resources.use(
    closeOnDispose(
      new RouterClient({
        ...grpc,
        address: environment.GW_ROUTER_ADDR,
        callDeadlineMs: environment.GW_ROUTER_CALL_DEADLINE_MS,
      }),
    ),
  );
  // Alerts: every admin replica serves /api/alerts; the one holding the lease in Redis evaluates the rules.
  const leaseRedis = environment.REDIS_URL
    ? connectRedis(environment.REDIS_URL, { connectionName: 'gw-admin-alerts-lease' })
    : undefined;
  if (leaseRedis) resources.defer(() => leaseRedis.disconnect());
  leaseRedis?.on('error', (error: Error) => logger.warn({ err: error }, 'alerts lease: Redis'));
  // Secrets that a process of the cluster could not read, for `secret_failure` rules.
  const secretFailures = mcpStore && resources.use(closeOnDispose(await followSecretFailures(mcpStore)));
  // Request logs: PostgreSQL at GW_LOGS_DATABASE_URL, filled by this process's log worker from the Redis stream
  // the ingress replicas append to, deleted by age hourly; the live tail reads the stream (docs/logs.md).
  const logs = environment.GW_LOGS_DATABASE_URL
    ? resources.use(
        await startLogWorker({
          databaseUrl: environment.GW_LOGS_DATABASE_URL,
          redisUrl: environment.GW_LOGS_STREAM === 'on' ? environment.REDIS_URL : undefined,
          prefix: environment.GW_REDIS_PREFIX,
          settings,
          logger,
          metrics,
        }),
      )
    : undefined;
  // Alerts read the log store: they stop before it closes.
  const alerts =
    mcpStore &&
    leaseRedis &&
    resources.use(
      startAlerts({
        store: mcpStore,
        config: config.alerts,
        lease: await RedisLease.create({
          redis: leaseRedis,
          prefix: environment.GW_REDIS_PREFIX,
          leaseMs: config.alerts.lease_ms,
        }),
        sources: {
          health: router,
          budgets: governanceBudgetSource((request) => governance.manage(request)),
          logs: logs?.store,
          dropped: logs?.store,
        },
        secretFailures,
        logger,
        onOutcome: (channelType, outcome) =>
          metrics.alertNotifications.inc({ channel_type: channelType, outcome }),
        outbound: outboundPolicy(config.network),
        readSecret: (value) => resolveSecret(value, process.env, secrets),
      }),
    );
  // The audit log: table audit_log in the same database, appended to by every admin replica right after each
  // answer (one chain: appends serialize on an advisory lock); kept forever (docs/admin-access.md "Audit log").
  const auditStore = environment.GW_LOGS_DATABASE_URL
    ? resources.use(
        await PostgresAuditStore.open({
          url: environment.GW_LOGS_DATABASE_URL,
          onError: (error) => logger.warn({ err: error }, 'audit log: PostgreSQL'),
        }),
      )
    : undefined;
  // audit.on_store_failure: queue: every record goes through a Redis stream before its change is answered, and
  // each admin replica writes the stream into the chain in order (docs/admin-access.md "Audit log").
  const queueAudit = auditStore !== undefined && config.audit.on_store_failure === 'queue';
  if (queueAudit && !environment.REDIS_URL)
    throw new ConfigError(
      'audit.on_store_failure: queue keeps audit records in Redis, and REDIS_URL is not set',
    );
  const auditRedis =
    queueAudit && environment.REDIS_URL
      ? connectRedis(environment.REDIS_URL, {
          connectionName: 'gw-admin-audit-queue',
          // A change waits for its record's append: with Redis down it fails at once, never queued in memory.
          enableOfflineQueue: false,
          maxRetriesPerRequest: 1,
          commandTimeout: environment.GW_REDIS_COMMAND_TIMEOUT_MS * 4,
        })
      : undefined;
  if (auditRedis) resources.defer(() => auditRedis.disconnect());
  auditRedis?.on('error', (error: Error) => logger.warn({ err: error }, 'audit queue: Redis'));
  // Changes are refused until the queue's connection is up: wait for it (a while) before serving.
  if (auditRedis && auditRedis.status !== 'ready')
    await Promise.race([new Promise((resolve) => auditRedis.once('ready', resolve)), sleep(10_000)]);
  const auditQueue =
    auditRedis && new RedisAuditQueue({ redis: auditRedis, prefix: environment.GW_REDIS_PREFIX });
  const auditDrainFailed = throttledLog(logger, 'warn');
  if (auditRedis && auditStore)
    resources.use(
      startAuditQueueDrain({
        redis: auditRedis,
        prefix: environment.GW_REDIS_PREFIX,
        store: auditStore,
        onError: (error) =>
          auditDrainFailed(
            String((error as Error).message).slice(0, 200),
            { err: error },
            'audit queue: records wait in Redis (PostgreSQL or Redis failed)',
          ),
        onInvalid: (id) => logger.error({ id }, 'audit queue: an entry could not be decoded and is skipped'),
      }),
    );
  const app = composeAdmin({
    config,
    settings,
    router,
    governance,
    logger,
    adminToken: environment.GATEWAY_ADMIN_TOKEN,
    oidcClientSecret: environment.GW_OIDC_CLIENT_SECRET,
    scimToken: environment.GW_SCIM_TOKEN,
    publicUrl: environment.GW_PUBLIC_URL,
    mcpRegistry: mcpStore && new McpRegistry({ store: mcpStore, logger }),
    store: mcpStore,
    cacheBackend,
    alerts,
    vault: { resolver: secrets, publishRefresh: mcpStore && (() => publishVaultRefresh(mcpStore)) },
    logs: logs ?? {
      unavailable:
        'request logs are off in this cluster: set GW_LOGS_DATABASE_URL (the PostgreSQL database of request logs) on the admin',
    },
    audit: auditStore
      ? { store: auditStore, queue: auditQueue, onFailure: () => metrics.auditAppendFailures.inc() }
      : {
          unavailable:
            'the audit log is off in this cluster: set GW_LOGS_DATABASE_URL (the PostgreSQL database of request and audit logs) on the admin',
        },
  });
  // Records of the last answers are stored before the audit store closes.
  resources.defer(() => app.drainAudit());
  const http = resources.use(
    await startHttpServer({
      port: environment.GW_ADMIN_PORT,
      host: environment.GW_HOST,
      handlers: [app.handle],
      upgrades: [app.upgrade],
      limits: httpLimits(environment),
      draining: () => probes.draining,
      drainMs,
    }),
  );
  // First at shutdown: the admin's live connections end, so the server can drain.
  resources.defer(() => app.close());
  // /metrics (process metrics) and the probes on their own port, as the other services whose main port does not
  // serve them.
  const metricsHttp = resources.use(
    await startHttpServer({
      port: environment.GW_METRICS_PORT,
      host: environment.GW_HOST,
      handlers: [metricsHandler(metrics, environment.GW_METRICS_TOKEN), probesHandler(probes)],
      drainMs,
    }),
  );
  logger.info({ port: http.port, metricsPort: metricsHttp.port }, 'admin listening');
  onShutdown({ logger, deadlineMs: drainMs, resources, probes, drainDelayMs: environment.GW_DRAIN_DELAY_MS });
});
