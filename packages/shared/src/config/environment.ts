import { z } from 'zod';
import { parseRedisTopology } from '../store/redis-topology.ts';
import { ConfigError, type GatewayConfig, loadGatewayConfig } from './gateway-config.ts';

/**
 * The environment of each process, as one zod schema per service (README.md "Configuration" lists them), each
 * holding only the variables that service acts on. Each process reads it once, at start, in its main
 * (`readSettings`); everything below main gets typed settings. A missing or bad variable fails start-up with one
 * line naming it.
 */
const unset = (value: unknown) => (value === '' ? undefined : value);

function port(fallback: number) {
  return z.preprocess(
    unset,
    z
      .string()
      .regex(/^\d{1,5}$/, { error: 'is not a port number' })
      .transform(Number)
      .refine((value) => value <= 65_535, { error: 'is not a port number' })
      .default(fallback),
  );
}

const positiveIntegerText = z
  .string()
  .regex(/^\d+$/, { error: 'is not a positive integer' })
  .transform(Number)
  .refine((value) => value > 0 && Number.isSafeInteger(value), { error: 'is not a positive integer' });

const positiveInteger = (fallback: number) => z.preprocess(unset, positiveIntegerText.default(fallback));
const optionalPositiveInteger = z.preprocess(unset, positiveIntegerText.optional());

const nonNegativeIntegerText = z
  .string()
  .regex(/^\d+$/, { error: 'is not a non-negative integer' })
  .transform(Number)
  .refine(Number.isSafeInteger, { error: 'is not a non-negative integer' });

const optionalText = z.preprocess(unset, z.string().optional());
const optionalHttpUrl = z.preprocess(
  unset,
  z.url({ protocol: /^https?$/, error: 'is not an http(s) URL' }).optional(),
);

/**
 * A Redis URL (one server, `redis+cluster://` or `redis+sentinel://`: parseRedisTopology); `whenUnset` makes it
 * required (unset or empty refused with that message).
 */
const redisUrl = (whenUnset?: string) =>
  z.string({ error: () => whenUnset ?? 'is not set' }).superRefine((value, context) => {
    try {
      parseRedisTopology(value);
    } catch (error) {
      context.addIssue({ code: 'custom', message: (error as Error).message });
    }
  });

/** `host:port`, `[v6]:port`, a gRPC name (`dns:///name:port`, `unix:…`), or a comma-separated IPv4 list. */
const ADDRESS =
  /^(?:(?:dns|unix|ipv4|ipv6):\S+|(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}|(?:\d{1,3}(?:\.\d{1,3}){3}:\d{1,5},)+\d{1,3}(?:\.\d{1,3}){3}:\d{1,5})$/;

/** The address of another service (comma-separated IPv4 addresses, or a `dns:` name, for several replicas). */
const addressText = (service: string) =>
  z.string({ error: `is not set: the address of the ${service} service (host:port)` }).regex(ADDRESS, {
    error: `is not an address of the ${service} service (host:port, ip:port,ip:port… or dns:///name:port)`,
  });
const address = (service: string) => z.preprocess(unset, addressText(service));
const optionalAddress = (service: string) => z.preprocess(unset, addressText(service).optional());

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const common = {
  GATEWAY_CONFIG: optionalText,
  LOG_LEVEL: z.preprocess(
    unset,
    z.enum(LOG_LEVELS, { error: `is not a log level (${LOG_LEVELS.join(', ')})` }).default('info'),
  ),
  // Loopback unless told otherwise: a first try is not open to the network (the Dockerfile and deploy/k8s
  // set 0.0.0.0 themselves).
  GW_HOST: z.preprocess(unset, z.string().default('127.0.0.1')),
  GW_SHUTDOWN_TIMEOUT_MS: positiveInteger(25_000),
  // How long start-up tries again when a store or peer does not answer yet (service-lifecycle.ts).
  GW_STARTUP_RETRY_MS: positiveInteger(60_000),
  // What an HTTP client may take and hold (packages/shared/src/server.ts HttpLimits).
  GW_HEADERS_TIMEOUT_MS: positiveInteger(10_000),
  GW_REQUEST_TIMEOUT_MS: positiveInteger(120_000),
  // A body still arriving brings at least GW_BODY_PROGRESS_BYTES every GW_BODY_PROGRESS_MS, or it is cut (408).
  GW_BODY_PROGRESS_MS: positiveInteger(10_000),
  GW_BODY_PROGRESS_BYTES: positiveInteger(1_024),
  GW_KEEP_ALIVE_TIMEOUT_MS: positiveInteger(65_000),
  GW_MAX_CONNECTIONS: positiveInteger(10_000),
  // Connections one remote address may hold; 0: no share; unset: nine tenths of the cap.
  GW_MAX_CONNECTIONS_PER_ADDRESS: z.preprocess(unset, nonNegativeIntegerText.optional()),
  /** When set, `/metrics` answers only `Authorization: Bearer <it>`. */
  GW_METRICS_TOKEN: optionalText,
  // OpenTelemetry's standard variables for where traces go, when the config's `tracing.endpoint` is unset.
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalHttpUrl,
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalHttpUrl,
};

/**
 * The OTLP/HTTP traces URL the environment names: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else
 * OTEL_EXPORTER_OTLP_ENDPOINT with `v1/traces` appended (the OTLP exporter specification's rule).
 */
export function otlpTracesEndpoint(environment: CommonEnvironment): string | undefined {
  const base = environment.OTEL_EXPORTER_OTLP_ENDPOINT;
  return environment.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (base && `${base.replace(/\/+$/, '')}/v1/traces`);
}

/** The HTTP limits of a process's environment, as startHttpServer takes them. */
export function httpLimits(environment: CommonEnvironment) {
  return {
    headersTimeoutMs: environment.GW_HEADERS_TIMEOUT_MS,
    requestTimeoutMs: environment.GW_REQUEST_TIMEOUT_MS,
    bodyProgressMs: environment.GW_BODY_PROGRESS_MS,
    bodyProgressBytes: environment.GW_BODY_PROGRESS_BYTES,
    keepAliveTimeoutMs: environment.GW_KEEP_ALIVE_TIMEOUT_MS,
    maxConnections: environment.GW_MAX_CONNECTIONS,
    maxConnectionsPerAddress: environment.GW_MAX_CONNECTIONS_PER_ADDRESS,
  };
}

/** Shared state: Redis when REDIS_URL is set (key prefix GW_REDIS_PREFIX). */
const redis = {
  REDIS_URL: z.preprocess(unset, redisUrl().optional()),
  GW_REDIS_PREFIX: z.preprocess(unset, z.string().default('gw:')),
  GW_REDIS_COMMAND_TIMEOUT_MS: positiveInteger(500),
};

/** A store: Redis when REDIS_URL is set, else a MemoryStore persisted to GATEWAY_DATA_DIR. */
const store = { ...redis, GATEWAY_DATA_DIR: z.preprocess(unset, z.string().default('./data')) };

/** `/metrics` of the services whose main port does not serve it (0: any free port). */
const metrics = { GW_METRICS_PORT: port(0) };

/**
 * gRPC between the cluster's processes (docs/kubernetes.md): the shared token every call carries, and
 * optionally mutual TLS (PEM files of the cluster's CA, this process's certificate and its key).
 */
const grpc = {
  GW_CLUSTER_TOKEN: z.preprocess(
    unset,
    z
      .string({ error: "is not set: the shared secret of the cluster's gRPC calls (openssl rand -hex 32)" })
      .min(16, { error: 'is too short: use at least 16 characters (openssl rand -hex 32)' }),
  ),
  GW_GRPC_TLS_CA: optionalText,
  GW_GRPC_TLS_CERT: optionalText,
  GW_GRPC_TLS_KEY: optionalText,
};

/** A gRPC server: connections older than this are closed (after a grace for their calls), so clients spread. */
const grpcServer = {
  ...grpc,
  GW_GRPC_MAX_CONNECTION_AGE_MS: positiveInteger(30_000),
  GW_GRPC_MAX_CONNECTION_AGE_GRACE_MS: positiveInteger(900_000),
};

/**
 * A gRPC client: the deadline of short calls and health checks (a frozen replica costs at most this much),
 * and of the router's calls, which last as long as a completion may.
 */
const grpcClient = {
  ...grpc,
  GW_GRPC_DEADLINE_MS: positiveInteger(1_000),
  GW_ROUTER_CALL_DEADLINE_MS: positiveInteger(900_000),
};

export type GrpcServerEnvironment = z.infer<z.ZodObject<typeof grpcServer>>;

/** What every process's environment has (logging, host, shutdown, config file). */
export type CommonEnvironment = z.infer<z.ZodObject<typeof common>>;

/** SCIM provisioning's bearer token (docs/scim.md): unset, `/scim/v2` answers 503. */
const scimToken = z.preprocess(
  unset,
  z.string().min(16, { error: 'is too short: use at least 16 characters (openssl rand -hex 32)' }).optional(),
);

export const embeddedEnvironmentSchema = z.object({
  ...common,
  PORT: port(8080),
  GATEWAY_DATA_DIR: store.GATEWAY_DATA_DIR,
  GATEWAY_ADMIN_TOKEN: optionalText,
  GW_OIDC_CLIENT_SECRET: optionalText,
  GW_SCIM_TOKEN: scimToken,
});

/**
 * Request logs in a cluster (docs/logs.md): the log worker and `/api/logs` need the PostgreSQL database; ingress
 * replicas append records to a Redis stream unless GW_LOGS_STREAM is off (no log worker runs).
 */
const logsDatabase = { GW_LOGS_DATABASE_URL: optionalText };
const logsStream = {
  GW_LOGS_STREAM: z.preprocess(unset, z.enum(['on', 'off'], { error: 'is not on or off' }).default('on')),
};

/**
 * A process behind a load balancer: after SIGTERM it keeps serving, new connections included, for this long
 * while its readiness says draining (the load balancer takes it out meanwhile), then drains (docs/kubernetes.md
 * "Probes").
 */
const drainDelay = { GW_DRAIN_DELAY_MS: z.preprocess(unset, nonNegativeIntegerText.default(0)) };

export const ingressEnvironmentSchema = z.object({
  ...common,
  // MCP in cluster mode: the catalog in Redis, tool calls through BullMQ.
  ...redis,
  ...logsStream,
  ...drainDelay,
  PORT: port(8080),
  GW_ROUTER_ADDR: address('router'),
  GW_GOVERNANCE_ADDR: address('governance'),
  /**
   * Where a governed request is admitted and settled: `local` (with REDIS_URL), by this process against the
   * shared store, the same Lua scripts the governance service runs; `remote`, by a governance replica over
   * gRPC (docs/architecture.md "Admission").
   */
  GW_GOVERNANCE_ADMISSION: z.preprocess(unset, z.enum(['local', 'remote']).default('local')),
  ...grpcClient,
});

export const routerEnvironmentSchema = z.object({
  ...common,
  ...store,
  ...metrics,
  GW_ROUTER_PORT: port(7101),
  ...grpcServer,
});

export const governanceEnvironmentSchema = z.object({
  ...common,
  ...store,
  ...metrics,
  GW_GOVERNANCE_PORT: port(7201),
  ...grpcServer,
});

export const adminEnvironmentSchema = z.object({
  ...common,
  // The MCP registry in Redis (admin edits clients, runners report on them).
  ...redis,
  ...metrics,
  GW_ADMIN_PORT: port(9080),
  /**
   * The ingress's address as browsers and apps reach it (the console's snippets and playground), unless the
   * setting `client.public_url` names one; `pnpm start:cluster` sets it to its ingress's port.
   */
  GW_PUBLIC_URL: optionalHttpUrl,
  GATEWAY_ADMIN_TOKEN: optionalText,
  // Single sign-on's client secret (`auth.oidc`); unset, gw is a public client (PKCE alone).
  GW_OIDC_CLIENT_SECRET: optionalText,
  GW_SCIM_TOKEN: scimToken,
  ...logsDatabase,
  ...logsStream,
  ...drainDelay,
  GW_ROUTER_ADDR: address('router'),
  GW_GOVERNANCE_ADDR: address('governance'),
  ...grpcClient,
});

export const mcpRunnerEnvironmentSchema = z.object({
  ...common,
  ...redis,
  ...metrics,
  REDIS_URL: z.preprocess(unset, redisUrl('is not set: mcp-runner takes its jobs from BullMQ on Redis')),
  GW_MCP_HEARTBEAT_MS: positiveInteger(10_000),
  GW_MCP_CONCURRENCY: optionalPositiveInteger,
  // A runner that dies (or freezes) loses its jobs' locks after GW_MCP_LOCK_DURATION_MS, and the next stalled
  // check (every GW_MCP_STALLED_INTERVAL_MS) hands them to another runner. A live runner renews its locks every
  // half lock, however long the tool runs; only an event loop blocked for the whole lock would lose one.
  GW_MCP_LOCK_DURATION_MS: positiveInteger(4_000),
  GW_MCP_STALLED_INTERVAL_MS: positiveInteger(2_000),
});

const replicas = z.preprocess(
  unset,
  z
    .string()
    .regex(/^\d{1,2}$/, { error: 'is not a replica count (0-64)' })
    .transform(Number)
    .refine((value) => value <= 64, { error: 'is not a replica count (0-64)' })
    .default(1),
);

/** `pnpm start:cluster` (src/cluster.ts): what it needs to lay out the processes it starts. */
export const clusterEnvironmentSchema = z.object({
  REDIS_URL: z.preprocess(
    unset,
    redisUrl('is not set: the cluster keeps its state in Redis (for example redis://127.0.0.1:6379)'),
  ),
  PORT: port(8080),
  GW_ROUTER_PORT: port(7101),
  GW_GOVERNANCE_PORT: port(7201),
  GW_ADMIN_PORT: port(9080),
  GW_PUBLIC_URL: optionalHttpUrl,
  GW_ROUTER_ADDR: optionalAddress('router'),
  GW_GOVERNANCE_ADDR: optionalAddress('governance'),
  GW_CLUSTER_TOKEN: z.preprocess(unset, grpc.GW_CLUSTER_TOKEN.optional()),
  GW_INGRESS_REPLICAS: replicas,
  GW_ROUTER_REPLICAS: replicas,
  GW_GOVERNANCE_REPLICAS: replicas,
  GW_MCP_RUNNER_REPLICAS: replicas,
  GW_ADMIN_REPLICAS: replicas,
  ...logsDatabase,
});

export type ClusterEnvironment = z.infer<typeof clusterEnvironmentSchema>;

/**
 * Every variable a gw process reads, from its services' schemas: gw's own credentials (the bootstrap admin
 * token, the cluster token, the Redis and log database URLs…) and settings. No secret reference written through
 * the admin API may name one (secret-reference-rule.ts); the config file's may.
 */
export const GATEWAY_VARIABLES: ReadonlySet<string> = new Set(
  [
    embeddedEnvironmentSchema,
    ingressEnvironmentSchema,
    routerEnvironmentSchema,
    governanceEnvironmentSchema,
    adminEnvironmentSchema,
    mcpRunnerEnvironmentSchema,
    clusterEnvironmentSchema,
  ].flatMap((schema) => Object.keys(schema.shape)),
);

/** Variables whose value a refusal never repeats (a Redis URL may carry a password). */
const SECRET_VARIABLES = new Set([
  'REDIS_URL',
  'GATEWAY_ADMIN_TOKEN',
  'GW_CLUSTER_TOKEN',
  'GW_METRICS_TOKEN',
  'GW_LOGS_DATABASE_URL',
  'GW_OIDC_CLIENT_SECRET',
  'GW_SCIM_TOKEN',
]);

/** The environment a schema describes; a bad or missing variable is a ConfigError naming it. */
export function readEnvironment<Schema extends z.ZodType>(
  schema: Schema,
  env: NodeJS.ProcessEnv,
): z.infer<Schema> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const name = String(issue.path[0] ?? 'environment');
  const value = env[name];
  const shown = value && !SECRET_VARIABLES.has(name) ? `'${value.slice(0, 80)}' ` : '';
  throw new ConfigError(`${name}: ${shown}${issue.message}`);
}

/**
 * What a process reads at start, in its main and nowhere else: its environment through its schema, then the
 * config file GATEWAY_CONFIG names (`env.NAME` references in it resolve from the same environment).
 */
export async function readSettings<Schema extends z.ZodType<CommonEnvironment>>(
  schema: Schema,
  env: NodeJS.ProcessEnv,
): Promise<{ environment: z.infer<Schema>; config: GatewayConfig }> {
  const environment = readEnvironment(schema, env);
  const config = await loadGatewayConfig(environment.GATEWAY_CONFIG, env);
  return { environment, config };
}
