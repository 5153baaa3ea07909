import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Every metric of gw, in one place. Labels are bounded: provider names, route templates, status codes and
 * error types, never key values, user ids or raw paths.
 */
export function createMetrics(options: { service: string; defaultMetrics?: boolean }) {
  const registry = new Registry();
  registry.setDefaultLabels({ service: options.service });
  if (options.defaultMetrics !== false) {
    // The event-loop lag histogram samples with a timer: prom-client's 10 ms default wakes an idle process 100
    // times a second (most of its idle CPU, measured); 100 ms still sees every stall worth alerting on.
    collectDefaultMetrics({ register: registry, prefix: 'gw_', eventLoopMonitoringPrecision: 100 });
    // prom-client names these gauges `_total`, which Prometheus reserves for counters (`promtool check metrics`
    // refuses them): left out, the rest of the process metrics stay.
    for (const name of ['active_handles_total', 'active_requests_total', 'active_resources_total']) {
      registry.removeSingleMetric(`gw_nodejs_${name}`);
    }
  }

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
      help: 'Tokens used by served requests, by provider, model and kind (prompt, completion)',
      labelNames: ['provider', 'model', 'kind'] as const,
      registers: [registry],
    }),
    cost: new Counter({
      name: 'gw_cost_usd_total',
      help: 'What governed requests were charged (USD), by provider and model',
      labelNames: ['provider', 'model'] as const,
      registers: [registry],
    }),
    admissions: new Counter({
      name: 'gw_governance_admissions_total',
      help: 'Governed admissions by path: local (from the slices this ingress holds, no Redis call on the request path) or exact (a Redis round trip)',
      labelNames: ['path'] as const,
      registers: [registry],
    }),
    grpcClientDuration: new Histogram({
      name: 'gw_grpc_client_duration_seconds',
      help: 'Calls to another service over gRPC, as the caller saw them (streams: to the first chunk)',
      labelNames: ['method'] as const,
      buckets: latencyBuckets,
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
      help: 'Provider health: 1 healthy, 0.5 degraded, 0.25 recovering, 0 failed',
      labelNames: ['provider'] as const,
      registers: [registry],
    }),
    providerErrorRate: new Gauge({
      name: 'gw_provider_error_rate',
      help: 'Share of failed upstream attempts over the recent window',
      labelNames: ['provider'] as const,
      registers: [registry],
    }),
    targetHealthState: new Gauge({
      name: 'gw_target_health_state',
      help: 'Health of a provider or one of its keys: 1 healthy, 0.5 degraded, 0.25 recovering, 0 failed',
      labelNames: ['provider', 'kind', 'target'] as const,
      registers: [registry],
    }),
    targetHealthScore: new Gauge({
      name: 'gw_target_health_score',
      help: 'Health score of a provider or key (1 perfect, 0 worst): its weight multiplier before state rules',
      labelNames: ['provider', 'kind', 'target'] as const,
      registers: [registry],
    }),
    healthTransitions: new Counter({
      name: 'gw_health_transitions_total',
      help: 'Health state changes of providers and keys',
      labelNames: ['provider', 'kind', 'from', 'to'] as const,
      registers: [registry],
    }),
    droppedRequests: new Counter({
      name: 'gw_dropped_requests_total',
      help:
        'Requests refused for overload, by reason (provider_queue_full, provider_queue_timeout: the router, by provider;' +
        ' connection_cap, address_share, body_stalled, drain_deadline: the HTTP server, provider "none")',
      labelNames: ['provider', 'reason'] as const,
      registers: [registry],
    }),
    streamFirstChunk: new Histogram({
      name: 'gw_stream_first_chunk_seconds',
      help: 'Time from request received to the first stream chunk written',
      labelNames: ['route', 'provider'] as const,
      buckets: latencyBuckets,
      registers: [registry],
    }),
    guardrailOutcomes: new Counter({
      name: 'gw_guardrail_outcomes_total',
      help: 'Guardrail rule checks by rule and outcome (pass, warning, blocked, flagged, error, condition_error)',
      labelNames: ['rule', 'outcome'] as const,
      registers: [registry],
    }),
    guardrailDuration: new Histogram({
      name: 'gw_guardrail_duration_seconds',
      help: 'Time one guardrail rule took on one side of a request (input, output or a stream window)',
      labelNames: ['side', 'mode'] as const,
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    cacheLookups: new Counter({
      name: 'gw_cache_lookups_total',
      help: 'Response cache lookups by result (hit, miss, error) and type (exact, semantic)',
      labelNames: ['result', 'type'] as const,
      registers: [registry],
    }),
    cacheStores: new Counter({
      name: 'gw_cache_stores_total',
      help: 'Answers offered to the response cache, by outcome (stored, refused, skipped, error)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    cacheLookupDuration: new Histogram({
      name: 'gw_cache_lookup_seconds',
      help: 'Time of a response cache lookup (the embedding call of a semantic one excluded), by type',
      labelNames: ['type'] as const,
      buckets: [0.00001, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1],
      registers: [registry],
    }),
    inflight: new Gauge({
      name: 'gw_inflight_requests',
      help: 'Requests being served',
      registers: [registry],
    }),
    vaultRefreshFailures: new Counter({
      name: 'gw_vault_refresh_failures_total',
      help: 'Secret-manager reads that failed (the last good value is kept), by backend',
      labelNames: ['backend'] as const,
      registers: [registry],
    }),
    droppedLogRecords: new Counter({
      name: 'gw_dropped_log_records_total',
      help:
        'Request-log records never stored, by reason (buffer_full, invalid, write_failed, closed: the writer;' +
        ' stream_lost: the log worker, in stream entries of up to 500 records; invalid: records it could not decode)',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    alertNotifications: new Counter({
      name: 'gw_alert_notifications_total',
      help: 'Alert notifications by channel type and what became of them: sent, failed (after its retries), dropped (queue full or shutdown)',
      labelNames: ['channel_type', 'outcome'] as const,
      registers: [registry],
    }),
    auditAppendFailures: new Counter({
      name: 'gw_audit_append_failures_total',
      help: 'Audit records that could not be stored (each is logged as an error)',
      registers: [registry],
    }),
    tracingSpans: new Counter({
      name: 'gw_tracing_spans_total',
      help: 'Sampled spans by what became of them: exported, dropped (export queue full), failed (export error)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** Distinct model names one process labels metrics with; past it they count as `other` (callers choose names). */
const MODEL_LABELS = 200;
const modelLabels = new Set<string>();

/** A model name as a metric label, bounded: the first 200 distinct names, then `other`. */
export function modelLabel(model: string): string {
  if (modelLabels.has(model)) return model;
  if (modelLabels.size >= MODEL_LABELS) return 'other';
  modelLabels.add(model);
  return model;
}
