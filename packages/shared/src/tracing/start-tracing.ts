import type { TracingConfig } from '../config/tracing-config.ts';
import type { Logger } from '../logger.ts';
import type { Metrics } from '../metrics.ts';
import type { Tracing } from './tracer.ts';

/** The OTLP/HTTP default of the specification: a collector on this machine. */
const DEFAULT_ENDPOINT = 'http://localhost:4318/v1/traces';

export interface StartTracingOptions {
  config: TracingConfig;
  /** The traces URL the process's environment names (`otlpTracesEndpoint`, read by main); the config's wins. */
  environmentEndpoint?: string | undefined;
  metrics: Metrics;
  logger: Logger;
  /** Told how many spans the full export queue dropped (the process's dropped counts). */
  onDropped?: ((count: number) => void) | undefined;
}

/**
 * The tracing of a process, or undefined when `tracing.enabled` is false: then nothing of OpenTelemetry is
 * loaded (the SDK is imported here, on demand) and every traced place costs one `if`.
 */
export async function startTracing(options: StartTracingOptions): Promise<Tracing | undefined> {
  if (!options.config.enabled) return undefined;
  const { startOtelTracing } = await import('./otel-tracing.ts');
  return startOtelTracing({
    config: options.config,
    endpoint: options.config.endpoint ?? options.environmentEndpoint ?? DEFAULT_ENDPOINT,
    metrics: options.metrics,
    logger: options.logger,
    onDropped: options.onDropped,
  });
}
