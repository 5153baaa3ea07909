import { RedisCacheBackend } from '@gw/cache/redis';
import { startAdmission } from '@gw/governance';
import { GovernanceClient } from '@gw/governance/client';
import { GuardrailRegistry, GuardrailRuntime } from '@gw/guardrails/registry';
import { RedisLogProducer } from '@gw/logs/redis';
import { BullToolQueue } from '@gw/mcp-runner/bullmq';
import { McpCatalog, McpRegistry } from '@gw/mcp-runner/control';
import { RouterClient } from '@gw/router/client';
import {
  ConfigError,
  closeOnDispose,
  createLogger,
  createMetrics,
  exposureWarning,
  followSystemSettings,
  httpLimits,
  ingressEnvironmentSchema,
  LiveSettings,
  metricsExposureWarning,
  otlpTracesEndpoint,
  outboundPolicy,
  Probes,
  storeCheck,
} from '@gw/shared';
import { grpcClientSettings } from '@gw/shared/grpc';
import { onShutdown, startHttpServer, startService } from '@gw/shared/server';
import { connectRedis, createStore } from '@gw/shared/store';
import { startTracing } from '@gw/shared/tracing';
import { startSecretResolver } from '@gw/vault';
import { composeIngress, countServerDrops, processDroppedTally } from './compose.ts';

const logger = createLogger({ service: 'ingress' });
const service = { logger, schema: ingressEnvironmentSchema, env: process.env };
// Started in the order they are needed; at shutdown the stack disposes them in reverse: the server drains, settles
// finish and buffered records are written, then clients and connections are released, tracing last.
await startService(service, async (resources, { environment, config }) => {
  const metrics = createMetrics({ service: 'ingress' });
  // Requests refused for overload and spans or records dropped, per minute and reason (`/api/logs/dropped`).
  const tally = processDroppedTally();
  const tracing = resources.use(
    await startTracing({
      config: config.tracing,
      environmentEndpoint: otlpTracesEndpoint(environment),
      metrics,
      logger,
      onDropped: (count) => tally.add('trace_buffer_full', count),
    }),
  );
  const grpc = {
    ...(await grpcClientSettings(environment)),
    observe: (method: string, seconds: number) => metrics.grpcClientDuration.observe({ method }, seconds),
  };
  const redisUrl = environment.REDIS_URL;
  const store = redisUrl ? resources.use(await createStore(environment)) : undefined;
  // System settings changed through the admin API apply here without a restart; the restart-only ones (the
  // cache's backend, the MCP queue's bounds) are read from them once, here.
  const settings = LiveSettings.of(config);
  if (store) resources.use(await followSystemSettings({ store, settings, logger }));
  const { cache: cacheSettings, mcp: mcpSettings } = settings.current();
  // The response cache: entries in Redis, shared by every replica (each keeps the index in process).
  if (cacheSettings.enabled && !redisUrl) {
    throw new ConfigError('cache.enabled: a cluster keeps cache entries in Redis, and REDIS_URL is not set');
  }
  const cacheBackend =
    cacheSettings.enabled && redisUrl
      ? resources.use(
          await RedisCacheBackend.connect({
            url: redisUrl,
            prefix: environment.GW_REDIS_PREFIX,
            commandTimeoutMs: environment.GW_REDIS_COMMAND_TIMEOUT_MS,
            maxEntriesPerScope: cacheSettings.max_entries_per_scope,
            onError: (error) => logger.warn({ err: error }, 'cache: Redis'),
          }),
        )
      : undefined;
  // Request logs: appended to the Redis stream the admin's log worker stores (docs/logs.md), sharing the store's
  // connection; off with GW_LOGS_STREAM=off (no log database, no worker).
  const logsConnection =
    redisUrl && environment.GW_LOGS_STREAM === 'on'
      ? connectRedis(redisUrl, {
          commandTimeout: environment.GW_REDIS_COMMAND_TIMEOUT_MS,
          maxRetriesPerRequest: 1,
          enableAutoPipelining: true,
        })
      : undefined;
  if (logsConnection) resources.defer(() => logsConnection.disconnect());
  // Guardrails: the config file's, and (with a store) what the admin API adds, followed on every replica.
  const useGuardrails = store || config.guardrails.rules.length > 0;
  // Guardrail credentials written as secret-manager references (docs/vault.md).
  const secrets = useGuardrails
    ? resources.use(
        await startSecretResolver({
          config,
          environment: process.env,
          logger,
          metrics,
          store,
          scope: 'guardrails',
        }),
      )
    : undefined;
  const guardrails = useGuardrails
    ? resources.use(
        await GuardrailRuntime.start({
          config: config.guardrails,
          registry: store && new GuardrailRegistry({ store, logger }),
          logger,
          environment: process.env,
          secrets,
          outbound: outboundPolicy(config.network),
        }),
      )
    : undefined;
  // MCP in cluster mode: the catalog follows the store, calls go to mcp-runner workers through BullMQ. Ingress
  // never connects to an MCP server itself.
  const mcpCatalog = store
    ? resources.use(await McpCatalog.start({ registry: new McpRegistry({ store, logger }), logger }))
    : undefined;
  const mcpQueue = redisUrl
    ? resources.use(
        await BullToolQueue.open({
          redisUrl,
          redisPrefix: environment.GW_REDIS_PREFIX,
          maxQueued: mcpSettings.max_queued,
          toolTimeoutMs: mcpSettings.tool_timeout_ms,
        }),
      )
    : undefined;
  const router = resources.use(
    closeOnDispose(
      new RouterClient({
        ...grpc,
        address: environment.GW_ROUTER_ADDR,
        callDeadlineMs: environment.GW_ROUTER_CALL_DEADLINE_MS,
      }),
    ),
  );
  // Admission is one atomic script on the shared store wherever it runs: run here, a governed request costs
  // no hop to a governance replica (docs/architecture.md "Admission"). Remote, requests without a virtual key
  // are still decided here from the shared client settings.
  const admission = resources.use(
    store && environment.GW_GOVERNANCE_ADMISSION === 'local'
      ? await startAdmission({
          config,
          settings,
          store,
          logger,
          metrics,
          // Its spans are governance's, as in the embedded gateway, wherever admission runs.
          tracer: tracing?.tracer('governance'),
        })
      : closeOnDispose(
          new GovernanceClient(
            { ...grpc, address: environment.GW_GOVERNANCE_ADDR },
            { anonymousLocally: settings.client },
          ),
        ),
  );
  // Ready when a router replica answers (and a governance replica, when admission is remote) and the store does;
  // draining from SIGTERM on (docs/kubernetes.md "Probes").
  const probes = resources
    .use(new Probes())
    .require('router', () => (router.servingReplicas() > 0 ? undefined : 'no router replica connected'));
  if (store) probes.require('store', storeCheck(store));
  if (admission instanceof GovernanceClient)
    probes.require('governance', () =>
      admission.servingReplicas() > 0 ? undefined : 'no governance replica connected',
    );
  const app = composeIngress({
    settings,
    admission,
    router,
    logger,
    metrics,
    probes,
    metricsToken: environment.GW_METRICS_TOKEN,
    tracer: tracing?.tracer('ingress'),
    mcp: mcpCatalog && mcpQueue && { catalog: mcpCatalog, executor: mcpQueue },
    guardrails,
    cacheBackend,
    logs: logsConnection && {
      sink: new RedisLogProducer({ redis: logsConnection, prefix: environment.GW_REDIS_PREFIX }),
      tally,
    },
  });
  // Settles finish, and the records they complete are written, before the clients they use are released.
  resources.defer(() => app.drain());
  const http = resources.use(
    await startHttpServer({
      port: environment.PORT,
      host: environment.GW_HOST,
      handlers: [app.handle],
      onDropped: countServerDrops(metrics, tally),
      draining: () => probes.draining,
      // HTTP/1.1 and cleartext HTTP/2 on one port (the Bedrock SDK speaks h2c by default).
      http2: true,
      limits: httpLimits(environment),
      drainMs: environment.GW_SHUTDOWN_TIMEOUT_MS,
    }),
  );
  logger.info({ port: http.port }, 'ingress listening');
  const exposed = exposureWarning(environment.GW_HOST, settings.client.current());
  if (exposed) logger.warn(exposed);
  const metricsExposed = metricsExposureWarning(environment.GW_HOST, environment.GW_METRICS_TOKEN);
  if (metricsExposed) logger.warn(metricsExposed);
  onShutdown({
    logger,
    deadlineMs: environment.GW_SHUTDOWN_TIMEOUT_MS,
    resources,
    probes,
    drainDelayMs: environment.GW_DRAIN_DELAY_MS,
  });
});
