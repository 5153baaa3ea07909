import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigError } from './config/gateway-config.ts';
import { GatewayError } from './errors/gateway-error.ts';
import type { Logger } from './logger.ts';

// How a service process starts and stops, whatever it serves: a start that fails ends it with one line, a
// signal disposes what it started.

/**
 * On SIGTERM or SIGINT: dispose the process's resources (the stack its start filled: servers drain first
 * because they started last, connections are released after), bounded by GW_SHUTDOWN_TIMEOUT_MS, then exit.
 */
export function onShutdown(options: {
  logger: Logger;
  /** GW_SHUTDOWN_TIMEOUT_MS: how long draining may take before the process is stopped. */
  deadlineMs: number;
  resources: AsyncDisposable;
}): void {
  const { logger, deadlineMs, resources } = options;
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'draining');
    const hardStop = setTimeout(() => {
      logger.warn('drain deadline passed; exiting');
      process.exit(1);
    }, deadlineMs + 5_000);
    hardStop.unref();
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
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
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

/**
 * Runs a service's start-up, which puts everything it starts on `resources` (disposed in reverse order at
 * shutdown: `onShutdown`). A failure (a missing or bad variable, a bad config file, a port in use, Redis
 * unreachable) releases what had started, then ends the process through refuseStart.
 */
export async function startService(
  logger: Logger,
  start: (resources: AsyncDisposableStack) => Promise<void>,
): Promise<void> {
  const resources = new AsyncDisposableStack();
  try {
    await start(resources);
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
    refuseStart(String(logger.bindings()['service'] ?? 'gateway'), error);
  }
}
