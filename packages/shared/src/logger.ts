import pino, { type Logger } from 'pino';
import { redactText, SECRET_LOG_PATHS } from './redaction.ts';

export type { Logger };

export function createLogger(options: {
  service: string;
  level?: string;
  /** Where lines go; stdout by default. */
  destination?: pino.DestinationStream;
}): Logger {
  const settings: pino.LoggerOptions = {
    name: `gw-${options.service}`,
    level: options.level ?? 'info',
    redact: { paths: SECRET_LOG_PATHS, censor: '[redacted]' },
    // An error's text may quote a URL or a header it failed on: key shapes are taken out of it.
    serializers: { err: redactedError },
    base: { service: options.service, pid: process.pid },
  };
  return options.destination ? pino(settings, options.destination) : pino(settings);
}

/** A logger that writes nothing, for tests and benchmarks. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

function redactedError(error: Error): ReturnType<typeof pino.stdSerializers.err> {
  const serialized = pino.stdSerializers.err(error);
  serialized.message = redactText(serialized.message);
  if (serialized.stack) serialized.stack = redactText(serialized.stack);
  return serialized;
}

export interface LogThrottleOptions {
  /** One line per key and interval is written in full; the others are counted. 10 s by default. */
  intervalMs?: number;
  /** Keys followed at once (a bound on memory); past it, lines of new keys are counted under `other`. 100. */
  maxKeys?: number;
}

/**
 * Writes the first line of each kind (`key`: the message and, say, an error's type) per interval, counts the
 * rest, and when the interval ends writes one summary line with how many were left out: an outage that fails
 * thousands of requests a second leaves a few lines, not one per request, and none is lost from the count.
 */
export function throttledLog(
  logger: Logger,
  level: 'error' | 'warn',
  options: LogThrottleOptions = {},
): (key: string, fields: Record<string, unknown>, message: string) => void {
  const intervalMs = options.intervalMs ?? 10_000;
  const maxKeys = options.maxKeys ?? 100;
  const windows = new Map<string, { message: string; suppressed: number }>();
  return (key, fields, message) => {
    const open = windows.get(key) ?? (windows.size >= maxKeys ? windows.get('other') : undefined);
    if (open) {
      open.suppressed += 1;
      return;
    }
    const window = { message, suppressed: 0 };
    const slot = windows.size >= maxKeys ? 'other' : key;
    windows.set(slot, window);
    logger[level](fields, message);
    setTimeout(() => {
      windows.delete(slot);
      if (window.suppressed > 0)
        logger[level](
          { suppressed: window.suppressed, intervalMs },
          `${window.message} (${window.suppressed} more like it in the last ${intervalMs / 1000} s, not logged one by one)`,
        );
    }, intervalMs).unref();
  };
}
