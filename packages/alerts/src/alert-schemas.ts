import { destination, secret } from '@gw/shared';
import { z } from 'zod';

/** An id of a rule or channel: it goes into paths and dedup keys, so it stays short and plain. */
const id = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z0-9_.-]+$/, 'may hold letters, digits, `_`, `.` and `-` only');

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });
const windowMs = z.number().int().min(10_000).max(86_400_000).default(300_000);
const HEALTH_ALERT_STATES = ['degraded', 'failed', 'recovering'] as const;
/** Severities as PagerDuty names them; other channels show them as text. */
export const SEVERITIES = ['info', 'warning', 'error', 'critical'] as const;
export type Severity = (typeof SEVERITIES)[number];

const ruleShape = {
  id,
  name: z.string().min(1).max(200).optional(),
  enabled: z.boolean().default(true),
  /** Channel ids notified when the rule fires (and, where they support it, when it resolves). */
  channels: z.array(id).min(1).max(20),
  severity: z.enum(SEVERITIES).default('warning'),
  /** One notification per rule and subject within this time, whatever the burst. */
  cooldown_ms: z
    .number()
    .int()
    .min(0)
    .max(7 * 86_400_000)
    .default(900_000),
  /** Send a resolve when the condition clears (channels that have one: webhook, Slack, PagerDuty, email). */
  notify_resolved: z.boolean().default(true),
};

/** The window rules read the request log through: optional filters narrow what is counted. */
const windowShape = {
  window_ms: windowMs,
  /** Too few requests in the window say nothing: the rule stays quiet below this. */
  min_requests: z.number().int().min(1).max(1_000_000).default(20),
  provider: z.string().min(1).max(128).optional(),
  model: z.string().min(1).max(256).optional(),
  /** One subject per provider (each alerts and resolves on its own) instead of one for all traffic. */
  per_provider: z.boolean().default(false),
};

export const alertRuleSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    ...ruleShape,
    kind: z.literal('budget_threshold'),
    /** Percentages of a budget's limit; each alerts once per budget period. */
    thresholds: z
      .array(z.number().gt(0).max(1000))
      .min(1)
      .max(10)
      .default([50, 80, 100])
      .refine((values) => new Set(values).size === values.length, 'must not repeat a value'),
    /** Only budgets of these levels (`virtual_key`, `team`, `customer`, `user`, `business_unit`, `provider_config`); all when absent. */
    levels: z
      .array(z.enum(['virtual_key', 'team', 'customer', 'user', 'business_unit', 'provider_config']))
      .min(1)
      .optional(),
  }),
  z.strictObject({
    ...ruleShape,
    kind: z.literal('provider_health'),
    /** The states that fire; back to healthy resolves. */
    states: z.array(z.enum(HEALTH_ALERT_STATES)).min(1).default(['degraded', 'failed']),
    providers: z.array(z.string().min(1).max(128)).min(1).optional(),
  }),
  z.strictObject({
    ...ruleShape,
    ...windowShape,
    kind: z.literal('error_rate'),
    /** Fraction of requests answered with 400 or more, 0 to 1. */
    threshold: z.number().gt(0).max(1),
  }),
  z.strictObject({
    ...ruleShape,
    ...windowShape,
    kind: z.literal('latency'),
    percentile: z.enum(['p50', 'p95', 'p99']).default('p95'),
    threshold_ms: z.number().positive().max(3_600_000),
  }),
  z.strictObject({
    ...ruleShape,
    window_ms: windowMs,
    provider: windowShape.provider,
    model: windowShape.model,
    per_provider: windowShape.per_provider,
    kind: z.literal('guardrail_blocks'),
    /** Requests refused by a guardrail (446) in the window. */
    threshold: z.number().int().min(1),
  }),
  z.strictObject({
    ...ruleShape,
    kind: z.literal('dropped_requests'),
    /** Drops are counted per minute: the window is whole minutes' worth. */
    window_ms: z.number().int().min(60_000).max(86_400_000).default(300_000),
    threshold: z.number().int().min(1),
    /** Only drops of these reasons; all when absent. */
    reasons: z.array(z.string().min(1).max(64)).min(1).optional(),
  }),
  z.strictObject({
    ...ruleShape,
    kind: z.literal('secret_failure'),
    /** Only secrets whose reference contains one of these texts; all when absent. */
    references: z.array(z.string().min(1).max(512)).min(1).optional(),
  }),
]);
export type AlertRule = z.infer<typeof alertRuleSchema>;
export type AlertRuleKind = AlertRule['kind'];

const channelShape = { id, name: z.string().min(1).max(200).optional(), enabled: z.boolean().default(true) };
const headerValue = z.string().max(4096);
const RESERVED_HEADERS = new Set([
  'host',
  'content-length',
  'content-type',
  'transfer-encoding',
  'connection',
  'x-gw-timestamp',
  'x-gw-signature',
]);

export const alertChannelSchema = z.discriminatedUnion('type', [
  z.strictObject({
    ...channelShape,
    type: z.literal('webhook'),
    url: destination(httpUrl),
    /** Signs every body (docs/alerts.md "Verifying a webhook"); at least 16 characters. */
    secret: secret(z.string().min(16).max(512)),
    /** Sent with every delivery (a receiver's own credential); not the ones gw sets or HTTP framing owns. */
    headers: secret(z.record(z.string().regex(/^[A-Za-z0-9-]+$/, 'is not a header name'), headerValue))
      .superRefine((headers, context) => {
        for (const name of Object.keys(headers)) {
          if (RESERVED_HEADERS.has(name.toLowerCase()))
            context.addIssue({ code: 'custom', path: [name], message: 'is set by gw itself' });
        }
      })
      .optional(),
  }),
  /** The URL is both where it sends and its credential (its last segment): alerts-admin shows it masked. */
  z.strictObject({ ...channelShape, type: z.literal('slack'), url: destination(httpUrl) }),
  z.strictObject({
    ...channelShape,
    type: z.literal('pagerduty'),
    routing_key: secret(z.string().min(1).max(128)),
    /** Events API v2 base; the enqueue path is `/v2/enqueue` under it. */
    url: destination(httpUrl).default('https://events.pagerduty.com'),
  }),
  z.strictObject({
    ...channelShape,
    type: z.literal('email'),
    host: destination(z.string().min(1).max(253)),
    port: destination(z.number().int().min(1).max(65_535)).default(587),
    /** TLS from the first byte (port 465); otherwise STARTTLS when the server offers it. */
    secure: z.boolean().default(false),
    username: z.string().min(1).max(256).optional(),
    password: secret(z.string().min(1).max(512)).optional(),
    from: z.email(),
    to: z.array(z.email()).min(1).max(50),
  }),
]);
export type AlertChannel = z.infer<typeof alertChannelSchema>;

/** What a notification says: the same fields on every channel, each rendering them its own way. */
export interface AlertNotification {
  /** `trigger` when a condition starts (or an event happens), `resolve` when it clears, `test` from the API. */
  action: 'trigger' | 'resolve' | 'test';
  rule_id: string;
  kind: AlertRuleKind | 'test';
  /** What the rule is about: a provider, a budget and threshold, a secret reference. */
  subject: string;
  severity: Severity;
  summary: string;
  /** Stable per rule and subject: PagerDuty dedup_key, and what a resolve refers to. */
  dedup_key: string;
  /** Epoch ms. */
  time: number;
  details: Record<string, unknown>;
}

/** One send as history keeps it. */
export const alertHistoryEntrySchema = z.object({
  id: z.string(),
  time: z.number(),
  rule_id: z.string(),
  channel_id: z.string(),
  channel_type: z.string(),
  action: z.enum(['trigger', 'resolve', 'test']),
  subject: z.string(),
  summary: z.string(),
  outcome: z.enum(['sent', 'failed']),
  attempts: z.number().int(),
  error: z.string().optional(),
});
export type AlertHistoryEntry = z.infer<typeof alertHistoryEntrySchema>;
