import { setTimeout as sleep } from 'node:timers/promises';
import type { z } from 'zod';
import { type CommonEnvironment, readSettings } from './config/environment.ts';
import { ConfigError, type GatewayConfig } from './config/gateway-config.ts';
import { GatewayError } from './errors/gateway-error.ts';
import type { Logger } from './logger.ts';
import type { Probes } from './probes.ts';

// How a service process starts and stops, whatever it serves: a start that fails ends it with one line, a
// signal disposes what it started.

/**
 * On SIGTERM or SIGINT: readiness turns to draining at once; after `drainDelayMs` (GW_DRAIN_DELAY_MS, while a
 * load balancer takes the process out, it keeps serving) dispose the process's resources (the stack its start
 * filled: servers drain first because they started last, connections are released after), bounded by
 * GW_SHUTDOWN_TIMEOUT_MS, then exit.
 */
export function onShutdown(options: {
  logger: Logger;
  /** GW_SHUTDOWN_TIMEOUT_MS: how long draining may take before the process is stopped. */
  deadlineMs: number;
  resources: AsyncDisposable;
  /** The process's probes: not ready from the signal on. */
  probes?: Probes | undefined;
  /** GW_DRAIN_DELAY_MS: how long the process keeps serving after the signal before it drains; 0 by default. */
  drainDelayMs?: number | undefined;
}): void {
  const { logger, deadlineMs, resources } = options;
  const delayMs = options.drainDelayMs ?? 0;
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    options.probes?.drain();
    const hardStop = setTimeout(
      () => {
        logger.warn('drain deadline passed; exiting');
        process.exit(1);
      },
      delayMs + deadlineMs + 5_000,
    );
    hardStop.unref();
    if (delayMs > 0) {
      logger.info({ signal, delayMs }, 'not ready; serving until the drain delay has passed');
      await sleep(delayMs);
    }
    logger.info({ signal }, 'draining');
    resources[Symbol.asyncDispose]().then(
      () => {
        logger.info('stopped');
        process.exit(0);
      },
      (error) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

/**
 * Whether an error says all there is in its message: a bad environment or config (ConfigError), a refusal
 * (GatewayError), or the system refusing a resource (a port in use, Redis unreachable: a Node error code,
 * here or in its cause). Anything else is named by its class (`TypeError: …`), a bug's hint.
 */
function explainsItself(error: unknown): boolean {
  if (error instanceof ConfigError || error instanceof GatewayError) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as NodeJS.ErrnoException).code;
  return typeof code === 'string' || (error.cause !== undefined && explainsItself(error.cause));
}

/** An error as one line: its message, and its cause's where the message does not already say it. */
function oneLine(error: unknown): string {
  if (!(error instanceof Error))
    return String(error)
      .replace(/\s*\n\s*/g, ' ')
      .trim();
  const plain = explainsItself(error) || error.name === 'Error';
  let text = plain ? error.message : `${error.name}: ${error.message}`;
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  if (cause && !text.includes(cause)) text = `${text}: ${cause}`;
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

/**
 * Ends a process that could not start: exit code 1 and one line on stderr, the same for every process,
 * `gw-<service> cannot start: <what is wrong>`, never a stack (startService logs it at debug level).
 */
export function refuseStart(service: string, error: unknown): never {
  process.stderr.write(`gw-${service} cannot start: ${oneLine(error)}\n`);
  process.exit(1);
}

/** How long a start that failed may take releasing what it had started before the process exits. */
const RELEASE_AFTER_FAILED_START_MS = 5_000;

/** Node and PostgreSQL codes of a peer that is not (yet) there: refused, reset, unresolved, starting up. */
const TRANSIENT_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  // PostgreSQL: the database system is starting up, or shutting down.
  '57P03',
  '57P01',
]);

/** What ioredis and node-postgres say, without a code, of a connection that failed or timed out. */
const TRANSIENT_MESSAGE =
  /connection is closed|connection closed|is unreachable|timed out|connection terminated/i;

/**
 * Whether a start-up failure may pass by itself: a store, a database or a peer that does not answer yet (a Redis
 * still starting, a command timed out on a loaded machine, a name not in DNS yet), as the error or any of its
 * causes says. A refusal (a bad config, a port in use, a wrong password: Redis's ReplyError) never passes.
 */
export function transientStartFailure(error: unknown, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 5 || isRefusal(error)) return false;
  if (error instanceof GatewayError) return error.type === 'service_unavailable';
  const code = (error as NodeJS.ErrnoException).code;
  if (typeof code === 'string' && TRANSIENT_CODES.has(code)) return true;
  // "Redis … is unreachable after 5 attempts: WRONGPASS …" is the password, however often it is tried.
  if (isRefusal(error.cause)) return false;
  if (error.name === 'MaxRetriesPerRequestError' || TRANSIENT_MESSAGE.test(error.message)) return true;
  if (
    error instanceof AggregateError &&
    error.errors.some((inner) => transientStartFailure(inner, depth + 1))
  )
    return true;
  return transientStartFailure(error.cause, depth + 1);
}

/** A peer that refused rather than failed to answer (a Redis ReplyError: a wrong password), or a bad config. */
function isRefusal(error: unknown): boolean {
  return error instanceof ConfigError || (error instanceof Error && error.name === 'ReplyError');
}

/** The wait before start-up attempt `attempt + 1`: 0.5 s, doubling, at most 5 s. */
function backoffMs(attempt: number): number {
  return Math.min(5_000, 500 * 2 ** (attempt - 1));
}

/**
 * Runs a service's start-up: reads the environment through the service's schema and the config file (a bad one
 * ends the process through refuseStart), then `start`, which puts everything it starts on `resources` (disposed
 * in reverse order at shutdown: `onShutdown`). A failure releases what had started; a transient one (a store or
 * peer not answering yet: `transientStartFailure`) starts again after a backoff, for GW_STARTUP_RETRY_MS in all;
 * any other (a port in use, a refusal), or the last transient one, ends the process through refuseStart.
 */
export async function startService<Schema extends z.ZodType<CommonEnvironment>>(
  options: { logger: Logger; schema: Schema; env: NodeJS.ProcessEnv },
  start: (
    resources: AsyncDisposableStack,
    settings: { environment: z.infer<Schema>; config: GatewayConfig },
  ) => Promise<void>,
): Promise<void> {
  const { logger } = options;
  const service = String(logger.bindings()['service'] ?? 'gateway');
  let settings: { environment: z.infer<Schema>; config: GatewayConfig };
  try {
    settings = await readSettings(options.schema, options.env);
  } catch (error) {
    logger.debug({ err: error }, 'start-up failed');
    refuseStart(service, error);
  }
  logger.level = settings.environment.LOG_LEVEL;
  const giveUpAt = Date.now() + settings.environment.GW_STARTUP_RETRY_MS;
  for (let attempt = 1; ; attempt++) {
    const resources = new AsyncDisposableStack();
    try {
      await start(resources, settings);
      return;
    } catch (error) {
      // The stack, for whoever runs with LOG_LEVEL=debug; stderr gets the one line.
      logger.debug({ err: error }, 'start-up failed');
      // Bounded: a connection that hangs while closing must not keep a process that cannot start alive.
      await Promise.race([
        resources
          .disposeAsync()
          .catch((cleanup) => logger.debug({ err: cleanup }, 'release after a failed start')),
        sleep(RELEASE_AFTER_FAILED_START_MS),
      ]);
      const waitMs = backoffMs(attempt);
      if (!transientStartFailure(error) || Date.now() + waitMs > giveUpAt) refuseStart(service, error);
      logger.warn(
        { attempt, retryInMs: waitMs, reason: oneLine(error) },
        'start-up: a store or peer is not answering yet; trying again',
      );
      await sleep(waitMs);
    }
  }
}
