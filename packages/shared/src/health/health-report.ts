import { z } from 'zod';
import { HEALTH_STATES } from './health-state.ts';

const targetHealthFields = {
  state: z.enum(HEALTH_STATES),
  /** When the state began (epoch ms). */
  since: z.number(),
  /** 1 − the weighted penalty (error rate, latency, utilization, momentum). */
  score: z.number(),
  /** What the target's configured weight is multiplied by now (0 while Failed). */
  weight_multiplier: z.number(),
  requests: z.number(),
  failures: z.number(),
  error_rate: z.number(),
  latency_ms: z.object({
    p50: z.number().nullable(),
    p95: z.number().nullable(),
    ewma: z.number().nullable(),
  }),
  utilization: z.number(),
  momentum: z.number(),
  transitions: z.array(z.object({ from: z.enum(HEALTH_STATES), to: z.enum(HEALTH_STATES), at: z.number() })),
};

/**
 * One provider as `GET /api/health/providers` shows it: the provider, its keys and its models are views derived
 * from its targets (one key serving one model, where health is kept), listed last.
 */
export const providerHealthReportSchema = z.object({
  provider: z.string(),
  ...targetHealthFields,
  keys: z.array(z.object({ id: z.string(), ...targetHealthFields })),
  models: z.array(z.object({ model: z.string(), ...targetHealthFields })),
  /** Null: a call without a key (a provider that needs none) or without a model (some pass-through calls). */
  targets: z.array(
    z.object({ key: z.string().nullable(), model: z.string().nullable(), ...targetHealthFields }),
  ),
});

export type ProviderHealthReport = z.infer<typeof providerHealthReportSchema>;
export type TargetHealthReport = Omit<ProviderHealthReport, 'provider' | 'keys' | 'models' | 'targets'>;
