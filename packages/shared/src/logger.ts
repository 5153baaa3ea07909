import pino, { type Logger } from 'pino';

export type { Logger };

/** Paths never written to logs: credentials of callers and of providers. */
const REDACT_PATHS = [
  'headers.authorization',
  'headers["x-api-key"]',
  'headers["api-key"]',
  'headers["x-goog-api-key"]',
  'headers["x-gw-vk"]',
  'authorization',
  'apiKey',
  'api_key',
  'key.value',
  'keys[*].value',
  'config.keys[*].value',
  'virtual_key',
  'value',
  'secret_key',
  'access_key',
  'session_token',
];

export function createLogger(options: { service: string; level?: string }): Logger {
  return pino({
    name: `gw-${options.service}`,
    level: options.level ?? 'info',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { service: options.service, pid: process.pid },
  });
}

/** A logger that writes nothing, for tests and benchmarks. */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}
