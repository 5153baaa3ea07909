import { z } from 'zod';

/** One provider's health (SPEC.md "Provider/key health"); the gRPC client validates it with this schema. */
export const providerHealthSchema = z.object({
  provider: z.string(),
  state: z.enum(['healthy', 'degraded', 'failed']),
  errorRate: z.number(),
  requests: z.number(),
});

export type ProviderHealth = z.infer<typeof providerHealthSchema>;
type HealthState = ProviderHealth['state'];

const BUCKET_MS = 5_000;
const BUCKETS = 12;

interface Bucket {
  start: number;
  successes: number;
  failures: number;
}

/**
 * Error rate per provider over the last minute, in 5-second buckets: above 2 % degraded, above 5 % failed
 * (SPEC.md Limits 5). Recording is O(1) and allocation-free on the hot path.
 */
export class HealthTracker {
  private readonly providers = new Map<string, Bucket[]>();
  private readonly now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.now = options.now ?? Date.now;
  }

  record(provider: string, success: boolean): void {
    const now = this.now();
    let buckets = this.providers.get(provider);
    if (!buckets) {
      buckets = Array.from({ length: BUCKETS }, () => ({ start: 0, successes: 0, failures: 0 }));
      this.providers.set(provider, buckets);
    }
    const start = now - (now % BUCKET_MS);
    const bucket = buckets[Math.floor(start / BUCKET_MS) % BUCKETS]!;
    if (bucket.start !== start) {
      bucket.start = start;
      bucket.successes = 0;
      bucket.failures = 0;
    }
    if (success) bucket.successes++;
    else bucket.failures++;
  }

  snapshot(): ProviderHealth[] {
    const horizon = this.now() - BUCKET_MS * BUCKETS;
    return [...this.providers.entries()].map(([provider, buckets]) => {
      let successes = 0;
      let failures = 0;
      for (const bucket of buckets) {
        if (bucket.start <= horizon) continue;
        successes += bucket.successes;
        failures += bucket.failures;
      }
      const requests = successes + failures;
      const errorRate = requests === 0 ? 0 : failures / requests;
      const state: HealthState = errorRate > 0.05 ? 'failed' : errorRate > 0.02 ? 'degraded' : 'healthy';
      return { provider, state, errorRate, requests };
    });
  }
}
