import { Server as GrpcServer, type sendUnaryData } from '@grpc/grpc-js';
import type { z } from 'zod';
import {
  type CommonEnvironment,
  type GrpcServerEnvironment,
  otlpTracesEndpoint,
} from '../config/environment.ts';
import type { GatewayConfig } from '../config/gateway-config.ts';
import { followSystemSettings, LiveSettings } from '../config/system-settings.ts';
import { createLogger, type Logger } from '../logger.ts';
import { createMetrics, type Metrics } from '../metrics.ts';
import { Probes, storeCheck } from '../probes.ts';
import {
  type Closable,
  disposableServer,
  metricsHandler,
  onShutdown,
  probesHandler,
  startHttpServer,
  startService,
} from '../server.ts';
import { createStore, type Store, type StoreEnvironment } from '../store/index.ts';
import { startTracing } from '../tracing/start-tracing.ts';
import type { Tracer } from '../tracing/tracer.ts';
import { loadService } from './grpc-channel.ts';
import { type GrpcSecurity, readGrpcSecurity, serverCredentials, tokenCheck } from './grpc-security.ts';

/** What a service's registration is handed besides the server. */
export interface ServerContext {
  /** Aborts when the server starts to drain: long-lived streams (lanes) stop taking calls and end. */
  draining: AbortSignal;
}

/**
 * A gRPC server of the cluster: every call but the health check needs the cluster token (and, with mutual
 * TLS, a client certificate of the cluster's CA); connections close past a maximum age (their calls get a
 * grace period), so clients reconnect and spread over replicas added since. The standard health check says
 * SERVING while the process is ready (`ready`: its store answers) until the server starts draining; clients
 * (replica-pool.ts) and the kubelet's gRPC probe take a replica that is not out of rotation.
 */
export async function startGrpcServer(options: {
  port: number;
  host: string;
  /** `draining` aborts when the server starts to shut down (lanes stop taking calls: lane-server.ts). */
  register: (server: GrpcServer, context: ServerContext) => void;
  security: GrpcSecurity;
  /** Whether the process can do its work (its readiness); always, when not given. */
  ready?: () => Promise<boolean>;
  /** GW_GRPC_MAX_CONNECTION_AGE_MS and its grace for the calls still running; unlimited when unset. */
  maxConnectionAge?: { ageMs: number; graceMs: number };
  /** How long disposing the server drains (GW_SHUTDOWN_TIMEOUT_MS); `close(deadlineMs)` names its own. */
  drainMs?: number;
}): Promise<Closable & AsyncDisposable & { port: number }> {
  const age = options.maxConnectionAge;
  const server = new GrpcServer({
    'grpc.max_receive_message_length': 64 * 1024 * 1024,
    ...(age && { 'grpc.max_connection_age_ms': age.ageMs, 'grpc.max_connection_age_grace_ms': age.graceMs }),
    interceptors: [tokenCheck(options.security)],
  });
  const draining = new AbortController();
  const ready = options.ready ?? (async () => true);
  server.addService(loadService('health', 'Health').service, {
    Check: (_call: unknown, callback: sendUnaryData<{ status: string }>) => {
      ready().then((serving) =>
        callback(null, { status: serving && !draining.signal.aborted ? 'SERVING' : 'NOT_SERVING' }),
      );
    },
  });
  options.register(server, { draining: draining.signal });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(
      `${options.host}:${options.port}`,
      serverCredentials(options.security),
      (error, bound) => (error ? reject(error) : resolve(bound)),
    );
  });
  return disposableServer(
    {
      port,
      close: (deadlineMs) =>
        new Promise<void>((resolve) => {
          draining.abort();
          const force = setTimeout(() => {
            server.forceShutdown();
            resolve();
          }, deadlineMs);
          server.tryShutdown(() => {
            clearTimeout(force);
            resolve();
          });
        }),
    },
    options.drainMs,
  );
}

/**
 * The `main` of a gRPC service (router, governance): the environment its main hands over read through the
 * service's schema, config, store and metrics, the gRPC server, `/metrics` and the probes (`/health/live`,
 * `/health/ready`: the store answers) on GW_METRICS_PORT, and an orderly shutdown on SIGTERM. A bad environment
 * or config ends the process with one line; a store not answering yet is tried again (startService).
 */
export async function runGrpcService<
  Environment extends CommonEnvironment &
    StoreEnvironment &
    GrpcServerEnvironment & { GW_METRICS_PORT: number },
  Core extends AsyncDisposable,
>(options: {
  service: string;
  environment: z.ZodType<Environment>;
  /** The process's environment (`process.env`, read by main). */
  env: NodeJS.ProcessEnv;
  port: (environment: Environment) => number;
  createCore: (dependencies: {
    config: GatewayConfig;
    /** The live settings, kept on the stored ones (`PUT /api/config`). */
    settings: LiveSettings;
    store: Store;
    metrics: Metrics;
    logger: Logger;
    /** The process's environment, for `env.NAME` references resolved at use. */
    environment: NodeJS.ProcessEnv;
    /** The service's tracer when `tracing.enabled` (docs/tracing.md). */
    tracer: Tracer | undefined;
  }) => Promise<Core>;
  register: (server: GrpcServer, core: NoInfer<Core>, context: ServerContext) => void;
}): Promise<void> {
  const logger = createLogger({ service: options.service });
  // Started in the order they are needed; the stack disposes them in reverse: the metrics port (and the probes)
  // stays up while the gRPC server drains, the core and the store are released after, tracing last so the spans
  // of the calls drained are exported too.
  const service = { logger, schema: options.environment, env: options.env };
  await startService(service, async (resources, { environment, config }) => {
    const drainMs = environment.GW_SHUTDOWN_TIMEOUT_MS;
    const metrics = createMetrics({ service: options.service });
    const tracing = resources.use(
      await startTracing({
        config: config.tracing,
        environmentEndpoint: otlpTracesEndpoint(environment),
        metrics,
        logger,
      }),
    );
    const store = resources.use(await createStore(environment));
    const probes = resources.use(new Probes()).require('store', storeCheck(store));
    // System settings changed through the admin API (or a newer config file) apply here without a restart.
    const settings = LiveSettings.of(config);
    resources.use(await followSystemSettings({ store, settings, logger }));
    const core = resources.use(
      await options.createCore({
        config,
        settings,
        store,
        metrics,
        logger,
        environment: options.env,
        tracer: tracing?.tracer(options.service),
      }),
    );
    const http = resources.use(
      await startHttpServer({
        port: environment.GW_METRICS_PORT,
        host: environment.GW_HOST,
        handlers: [metricsHandler(metrics, environment.GW_METRICS_TOKEN), probesHandler(probes)],
        drainMs,
      }),
    );
    const grpc = resources.use(
      await startGrpcServer({
        port: options.port(environment),
        host: environment.GW_HOST,
        register: (server, context) => options.register(server, core, context),
        security: await readGrpcSecurity(environment),
        ready: async () => (await probes.readiness()).status === 'ready',
        maxConnectionAge: {
          ageMs: environment.GW_GRPC_MAX_CONNECTION_AGE_MS,
          graceMs: environment.GW_GRPC_MAX_CONNECTION_AGE_GRACE_MS,
        },
        drainMs,
      }),
    );
    logger.info({ grpcPort: grpc.port, metricsPort: http.port }, `${options.service} listening`);
    onShutdown({ logger, deadlineMs: drainMs, resources, probes });
  });
}
