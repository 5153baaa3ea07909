import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Every metric of gw, in one place. Labels are bounded: provider names, route templates, status codes and
 * error types, never key values, user ids or raw paths.
 */
export function createMetrics(options: { service: string; defaultMetrics?: boolean }) {
  const registry = new Registry();
  registry.setDefaultLabels({ service: options.service });
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry, prefix: 'gw_' });

  const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
  return {
    registry,
    requests: new Counter({
      name: 'gw_requests_total',
      help: 'Requests answered by the gateway',
      labelNames: ['route', 'provider', 'status'] as const,
      registers: [registry],
    }),
    requestDuration: new Histogram({
      name: 'gw_request_duration_seconds',
      help: 'Time from request received to response finished',
      labelNames: ['route', 'provider'] as const,
      buckets: latencyBuckets,
      registers: [registry],
    }),
    upstreamDuration: new Histogram({
      name: 'gw_upstream_duration_seconds',
      help: 'Duration of upstream provider calls (to headers for streams)',
      labelNames: ['provider', 'operation'] as const,
      buckets: latencyBuckets,
      registers: [registry],
    }),
    upstreamErrors: new Counter({
      name: 'gw_upstream_errors_total',
      help: 'Failed upstream attempts by provider and error type',
      labelNames: ['provider', 'type', 'status'] as const,
      registers: [registry],
    }),
    retries: new Counter({
      name: 'gw_upstream_retries_total',
      help: 'Upstream attempts retried after a transient error',
      labelNames: ['provider'] as const,
      registers: [registry],
    }),
    tokens: new Counter({
      name: 'gw_tokens_total',
      help: 'Tokens used by served requests, by provider and kind (prompt, completion)',
      labelNames: ['provider', 'kind'] as const,
      registers: [registry],
    }),
    fallbacks: new Counter({
      name: 'gw_fallbacks_total',
      help: 'Requests answered by a fallback target',
      labelNames: ['provider'] as const,
      registers: [registry],
    }),
    providerHealth: new Gauge({
      name: 'gw_provider_health',
      help: 'Provider health: 1 healthy, 0.5 degraded, 0 failed',
      labelNames: ['provider'] as const,
      registers: [registry],
    }),
    providerErrorRate: new Gauge({
      name: 'gw_provider_error_rate',
      help: 'Share of failed upstream attempts over the recent window',
      labelNames: ['provider'] as const,
      registers: [registry],
    }),
    streamFirstChunk: new Histogram({
      name: 'gw_stream_first_chunk_seconds',
      help: 'Time from request received to the first stream chunk written',
      labelNames: ['route', 'provider'] as const,
      buckets: latencyBuckets,
      registers: [registry],
    }),
    inflight: new Gauge({
      name: 'gw_inflight_requests',
      help: 'Requests being served',
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
