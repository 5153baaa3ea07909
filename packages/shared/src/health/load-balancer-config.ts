import { z } from 'zod';
import type { Store } from '../store/store.ts';

/**
 * Adaptive load balancing (docs/routing-health.md): how health is measured, when a target
 * changes state, and how much each part of the score weighs. `load_balancer` in the config file seeds it;
 * `PUT /api/load-balancer/config` changes it on every replica without a restart.
 */
export const loadBalancerConfigSchema = z
  .strictObject({
    /** Off: weights stay as configured and nothing is skipped (health is still measured and reported). */
    enabled: z.boolean().default(true),
    /** The sliding window error rates and latencies are measured over. */
    window_ms: z.number().int().min(5_000).max(3_600_000).default(30_000),
    /** Its buckets: the window moves by this much. */
    bucket_ms: z.number().int().min(100).max(60_000).default(1_000),
    /** How often every replica shares what it measured and recomputes states and weights. */
    recompute_interval_ms: z.number().int().min(100).max(60_000).default(2_000),
    /** Fewer requests in the window than this never change a state: one error in three requests is no verdict. */
    min_samples: z.number().int().min(1).max(100_000).default(20),
    /** Above this error rate a target is Degraded (its traffic share is reduced). */
    degraded_error_rate: z.number().min(0).max(1).default(0.02),
    /** Above this error rate a target is Failed (skipped while another target can serve; probed). */
    failed_error_rate: z.number().min(0).max(1).default(0.05),
    /** A Failed target gets one probe request per this interval per replica (half-open). */
    probe_interval_ms: z.number().int().min(100).max(600_000).default(5_000),
    /**
     * Fast ejection: a target (provider, key and model) whose attempts fail this many times in a row (5xx, 429,
     * timeouts, no connection) is Failed on this replica at once, and on every replica at the next recompute,
     * without waiting for `min_samples` (Envoy's outlier detection, `consecutive_5xx`). 0: no fast ejection.
     */
    consecutive_failures: z.number().int().min(0).max(1_000).default(5),
    /** Successful probes (and no failure among the last ones) that start the recovery. */
    recovery_successes: z.number().int().min(1).max(1_000).default(3),
    /** The recovery: the penalty falls by 90 % over this time, then the target is healthy. */
    recovery_ms: z.number().int().min(1_000).max(3_600_000).default(30_000),
    /** Parts of the score (by default error rate 50 %, latency 20 %, utilization and momentum the rest). */
    score_weights: z
      .strictObject({
        error_rate: z.number().min(0).max(1).default(0.5),
        latency: z.number().min(0).max(1).default(0.2),
        utilization: z.number().min(0).max(1).default(0.15),
        momentum: z.number().min(0).max(1).default(0.15),
      })
      .default({ error_rate: 0.5, latency: 0.2, utilization: 0.15, momentum: 0.15 })
      .refine(
        (weights) =>
          Math.abs(weights.error_rate + weights.latency + weights.utilization + weights.momentum - 1) < 1e-6,
        { error: 'must add up to 1' },
      ),
  })
  .refine((config) => config.degraded_error_rate <= config.failed_error_rate, {
    error: 'degraded_error_rate must not be above failed_error_rate',
    path: ['degraded_error_rate'],
  })
  .refine((config) => config.bucket_ms * 2 <= config.window_ms, {
    error: 'must be at most half of window_ms',
    path: ['bucket_ms'],
  });

export type LoadBalancerConfig = z.infer<typeof loadBalancerConfigSchema>;

export const DEFAULT_LOAD_BALANCER_CONFIG: LoadBalancerConfig = loadBalancerConfigSchema.parse({});

const SETTINGS = 'settings';
const DOCUMENT = 'load-balancer';

/** The config in force: the document written through the admin API, else the config file's. */
export async function readLoadBalancerConfig(
  store: Pick<Store, 'get'>,
  seed: LoadBalancerConfig,
): Promise<LoadBalancerConfig> {
  const stored = await store.get(SETTINGS, DOCUMENT);
  if (stored === undefined) return seed;
  const parsed = loadBalancerConfigSchema.safeParse(stored);
  return parsed.success ? parsed.data : seed;
}

/** Every replica's health board reads it at its next recompute (within `recompute_interval_ms`). */
export async function writeLoadBalancerConfig(
  store: Pick<Store, 'put'>,
  config: LoadBalancerConfig,
): Promise<void> {
  await store.put(SETTINGS, DOCUMENT, config);
}
