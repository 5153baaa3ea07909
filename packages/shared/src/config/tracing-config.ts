import { z } from 'zod';

/**
 * The config file's `tracing` section (docs/tracing.md): OpenTelemetry spans exported over OTLP/HTTP. Off by
 * default, and then no OpenTelemetry module is loaded at all.
 */
export const tracingConfigSchema = z
  .strictObject({
    enabled: z.boolean().default(false),
    /**
     * Share of new traces recorded (0..1). Parent-based: a request whose caller sent a `traceparent` follows the
     * caller's sampled flag, so a trace is recorded whole or not at all across every service.
     */
    sampling_ratio: z.number().min(0).max(1).default(1),
    /**
     * The OTLP/HTTP traces URL (`…/v1/traces`). Unset: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else
     * OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`, else http://localhost:4318/v1/traces.
     */
    endpoint: z.url({ protocol: /^https?$/, error: 'is not an http(s) URL' }).optional(),
    /** Headers of every export request (a collector's token: write it `env.NAME`). */
    headers: z.record(z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/), z.string()).default({}),
    /** Each process's `service.name` is this prefix and its service (`gw-ingress`, `gw-router`, …). */
    service_name_prefix: z.string().max(64).default('gw-'),
    /**
     * Record prompts, answers and tool arguments and results on spans (`gen_ai.input.messages`, …). Off by
     * default: traces usually reach more people than the content should.
     */
    include_content: z.boolean().default(false),
    /** Spans waiting for export, per process; past it spans are dropped (and counted in gw_tracing_spans_total). */
    max_queue_size: z.number().int().positive().max(1_000_000).default(2048),
    /** Spans per export request. */
    max_export_batch_size: z.number().int().positive().default(512),
    /** Most time a finished span waits before its batch is sent. */
    scheduled_delay_ms: z.number().int().positive().default(5_000),
    /** Most time one export may take (also bounds the flush at shutdown). */
    export_timeout_ms: z.number().int().positive().default(10_000),
  })
  .refine((config) => config.max_export_batch_size <= config.max_queue_size, {
    error: 'max_export_batch_size must not exceed max_queue_size',
    path: ['max_export_batch_size'],
  });

export type TracingConfig = z.infer<typeof tracingConfigSchema>;
