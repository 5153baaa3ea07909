import { z } from 'zod';

/**
 * The alert evaluator (docs/alerts.md): how often rules are evaluated, and, in a cluster, how long the admin
 * replica that evaluates holds its lease in Redis without renewing it. Rules and channels themselves live in
 * the store and are managed through `/api/alerts`.
 */
export const alertsConfigSchema = z
  .strictObject({
    /** false: no evaluation in this process (the API still manages rules and channels). */
    enabled: z.boolean().default(true),
    evaluation_interval_ms: z.number().int().min(1_000).max(3_600_000).default(30_000),
    /** A holder that dies is replaced within this time; more than the interval, so the holder renews in time. */
    lease_ms: z.number().int().min(2_000).max(7_200_000).default(90_000),
    /** Sends kept in `GET /api/alerts/history`; the oldest go past it. */
    history_limit: z.number().int().min(10).max(100_000).default(1_000),
  })
  .refine((alerts) => alerts.lease_ms > alerts.evaluation_interval_ms, {
    path: ['lease_ms'],
    message: 'must be more than evaluation_interval_ms (the holder renews the lease once per evaluation)',
  });
export type AlertsConfig = z.infer<typeof alertsConfigSchema>;
