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
