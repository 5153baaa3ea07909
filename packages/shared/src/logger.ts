import pino, { type Logger } from 'pino';
import { SECRET_LOG_PATHS } from './redaction.ts';

export type { Logger };

export function createLogger(options: { service: string; level?: string }): Logger {
  return pino({
    name: `gw-${options.service}`,
    level: options.level ?? 'info',
    redact: { paths: SECRET_LOG_PATHS, censor: '[redacted]' },
    base: { service: options.service, pid: process.pid },
  });
}

/** A logger that writes nothing, for tests and benchmarks. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
