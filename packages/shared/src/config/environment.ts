import { z } from 'zod';
import { ConfigError } from './gateway-config.ts';

/**
 * The environment of each process, as one zod schema per service (README.md "Configuration" lists them).
 * Each process reads it once, at start, in its main; everything below main gets typed settings. A missing or
 * bad variable fails start-up with one line naming it.
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

const optionalText = z.preprocess(unset, z.string().optional());

/** The host:port of another service (comma-separated, or a `dns:` name, for several replicas). */
const address = (service: string) =>
  z.preprocess(unset, z.string({ error: `is not set: the address of the ${service} service (host:port)` }));

const common = {
  GATEWAY_CONFIG: optionalText,
  LOG_LEVEL: z.preprocess(
    unset,
    z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  ),
  GW_HOST: z.preprocess(unset, z.string().default('0.0.0.0')),
  GW_SHUTDOWN_TIMEOUT_MS: positiveInteger(25_000),
  /** `/metrics` of the services whose main port is gRPC (0: any free port). */
  GW_METRICS_PORT: port(0),
  REDIS_URL: optionalText,
  GW_REDIS_PREFIX: z.preprocess(unset, z.string().default('gw:')),
  GATEWAY_DATA_DIR: z.preprocess(unset, z.string().default('./data')),
};

/** What every process's environment has (logging, host, shutdown, store, config file). */
export type CommonEnvironment = z.infer<z.ZodObject<typeof common>>;

export const embeddedEnvironmentSchema = z.object({
  ...common,
  PORT: port(8080),
  GATEWAY_ADMIN_TOKEN: optionalText,
});

export const ingressEnvironmentSchema = z.object({
  ...common,
  PORT: port(8080),
  GW_ROUTER_ADDR: address('router'),
  GW_GOVERNANCE_ADDR: address('governance'),
});

export const routerEnvironmentSchema = z.object({ ...common, GW_ROUTER_PORT: port(7101) });

export const governanceEnvironmentSchema = z.object({ ...common, GW_GOVERNANCE_PORT: port(7201) });

export const adminEnvironmentSchema = z.object({
  ...common,
  GW_ADMIN_PORT: port(9080),
  GATEWAY_ADMIN_TOKEN: optionalText,
  GW_ROUTER_ADDR: address('router'),
  GW_GOVERNANCE_ADDR: address('governance'),
});

export const mcpRunnerEnvironmentSchema = z.object({
  ...common,
  REDIS_URL: z.preprocess(
    unset,
    z.string({ error: 'is not set: mcp-runner takes its jobs from BullMQ on Redis' }),
  ),
  GW_MCP_HEARTBEAT_MS: positiveInteger(10_000),
  GW_MCP_CONCURRENCY: optionalPositiveInteger,
  GW_MCP_LOCK_DURATION_MS: positiveInteger(30_000),
  GW_MCP_STALLED_INTERVAL_MS: positiveInteger(30_000),
});

/** The environment a schema describes, read once; a bad or missing variable is a ConfigError naming it. */
export function readEnvironment<Schema extends z.ZodType>(
  schema: Schema,
  env: NodeJS.ProcessEnv = process.env,
): z.infer<Schema> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const name = String(issue.path[0] ?? 'environment');
  const value = env[name];
  throw new ConfigError(`${name}: ${value ? `'${value.slice(0, 80)}' ` : ''}${issue.message}`);
}
