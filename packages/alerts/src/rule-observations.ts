import type { AlertRule } from './alert-schemas.ts';
import type {
  BudgetSource,
  DroppedSource,
  HealthSource,
  LogStatsSource,
  SecretFailure,
} from './alert-sources.ts';

/** What one evaluation found about one subject of a rule. */
export interface Observation {
  subject: string;
  /** `hold`: neither fires nor clears (a provider recovering, for a rule that does not name that state). */
  status: 'firing' | 'clear' | 'hold';
  summary: string;
  details: Record<string, unknown>;
  /** budget_threshold: the highest threshold reached, and the period it was reached in. */
  threshold?: number;
  period?: string;
}

export interface ObservationSources {
  health?: HealthSource | undefined;
  budgets?: BudgetSource | undefined;
  logs?: LogStatsSource | undefined;
  dropped?: DroppedSource | undefined;
}

export interface ObservationContext {
  sources: ObservationSources;
  now: number;
  /** Secret failures received since the last evaluation. */
  secretFailures: readonly SecretFailure[];
}

/** Each rule kind's reading of its source; a kind whose source this process lacks observes nothing. */
export async function observe(rule: AlertRule, context: ObservationContext): Promise<Observation[]> {
  const { sources, now } = context;
  switch (rule.kind) {
    case 'budget_threshold': {
      if (!sources.budgets) return [];
      const observations: Observation[] = [];
      for (const budget of await sources.budgets.budgets()) {
        if (rule.levels && !rule.levels.includes(budget.level as never)) continue;
        if (budget.max_limit <= 0) continue;
        const percent = (budget.used / budget.max_limit) * 100;
        const reached = rule.thresholds.filter((threshold) => percent >= threshold);
        const subject = `${budget.level}:${budget.owner_id}:${budget.budget_id}`;
        if (reached.length === 0) {
          observations.push({ subject, status: 'clear', summary: '', details: {}, period: budget.resets_at });
          continue;
        }
        const threshold = Math.max(...reached);
        observations.push({
          subject,
          status: 'firing',
          threshold,
          period: budget.resets_at,
          summary: `Budget ${budget.budget_id} of ${budget.level} ${budget.owner_id} reached ${threshold}% ($${round(budget.used)} of $${round(budget.max_limit)})`,
          details: {
            level: budget.level,
            owner_id: budget.owner_id,
            budget_id: budget.budget_id,
            threshold_percent: threshold,
            used_percent: round(percent),
            used: budget.used,
            max_limit: budget.max_limit,
            resets_at: budget.resets_at,
          },
        });
      }
      return observations;
    }
    case 'provider_health': {
      if (!sources.health) return [];
      return (await sources.health.health())
        .filter((report) => !rule.providers || rule.providers.includes(report.provider))
        .map((report): Observation => {
          const named = (rule.states as readonly string[]).includes(report.state);
          return {
            subject: report.provider,
            status: named ? 'firing' : report.state === 'healthy' ? 'clear' : 'hold',
            summary: named
              ? `Provider ${report.provider} is ${report.state} (error rate ${round(report.error_rate * 100)}%)`
              : `Provider ${report.provider} is healthy again`,
            details: {
              provider: report.provider,
              state: report.state,
              since: new Date(report.since).toISOString(),
              error_rate: round(report.error_rate),
              requests: report.requests,
              latency_p95_ms: report.latency_ms.p95,
            },
          };
        });
    }
    case 'error_rate':
    case 'latency':
    case 'guardrail_blocks':
      return observeWindow(rule, context);
    case 'dropped_requests': {
      if (!sources.dropped) return [];
      const counts = await sources.dropped.dropped({
        from: now - rule.window_ms,
        to: now,
        bucket_ms: rule.window_ms,
      });
      const byReason: Record<string, number> = {};
      for (const { reason, count } of counts.buckets) {
        if (rule.reasons && !rule.reasons.includes(reason)) continue;
        byReason[reason] = (byReason[reason] ?? 0) + count;
      }
      const total = Object.values(byReason).reduce((sum, count) => sum + count, 0);
      return [
        judged({
          subject: 'dropped',
          firing: total >= rule.threshold,
          summary: {
            firing: `${total} requests dropped in the last ${minutes(rule.window_ms)}`,
            clear: 'Dropped requests back under the threshold',
          },
          details: { dropped: total, threshold: rule.threshold, window_ms: rule.window_ms, ...byReason },
        }),
      ];
    }
    case 'secret_failure':
      return context.secretFailures
        .filter(
          (failure) => !rule.references || rule.references.some((text) => failure.reference.includes(text)),
        )
        .map((failure) => ({
          subject: failure.reference,
          status: 'firing',
          summary: `Secret ${failure.reference} could not be refreshed; the last good value stays in use`,
          details: {
            reference: failure.reference,
            backend: failure.backend,
            error: failure.error,
            at: failure.at.toISOString(),
          },
        }));
  }
}

type WindowRule = Extract<AlertRule, { kind: 'error_rate' | 'latency' | 'guardrail_blocks' }>;

/**
 * Window rules read `stats` with one bucket as wide as the window: buckets are aligned to multiples of their
 * width, so the window spans at most two, summed (latency: their percentiles weighted by count, an
 * approximation of the window's own percentile).
 */
async function observeWindow(rule: WindowRule, context: ObservationContext): Promise<Observation[]> {
  const logs = context.sources.logs;
  if (!logs) return [];
  const { now } = context;
  const stats = await logs.stats({
    filter: {
      from: now - rule.window_ms,
      to: now,
      ...(rule.provider && { provider: rule.provider }),
      ...(rule.model && { model: rule.model }),
      ...(rule.kind === 'guardrail_blocks' && { status: 446 }),
    },
    bucket_ms: rule.window_ms,
    ...(rule.per_provider && { group_by: 'provider' as const }),
  });
  const groups = new Map<string, { count: number; errors: number; latency: number }>();
  for (const bucket of stats.buckets) {
    const subject = rule.per_provider ? (bucket.group ?? 'none') : 'all';
    const group = groups.get(subject) ?? { count: 0, errors: 0, latency: 0 };
    const percentile =
      rule.kind === 'latency' ? bucket[`latency_${rule.percentile}_ms` as const] * bucket.count : 0;
    groups.set(subject, {
      count: group.count + bucket.count,
      errors: group.errors + bucket.errors,
      latency: group.latency + percentile,
    });
  }
  const window = minutes(rule.window_ms);
  const scope = (subject: string) => (subject === 'all' ? (rule.provider ?? 'all providers') : subject);
  const observations: Observation[] = [];
  for (const [subject, group] of groups) {
    if (rule.kind === 'guardrail_blocks') {
      observations.push(
        judged({
          subject,
          firing: group.count >= rule.threshold,
          summary: {
            firing: `${group.count} requests blocked by guardrails in the last ${window} (${scope(subject)})`,
            clear: `Guardrail blocks back under ${rule.threshold} (${scope(subject)})`,
          },
          details: { blocked: group.count, threshold: rule.threshold, window_ms: rule.window_ms },
        }),
      );
      continue;
    }
    if (group.count < rule.min_requests) {
      observations.push({
        subject,
        status: 'clear',
        summary: `Too few requests to judge (${scope(subject)})`,
        details: {},
      });
      continue;
    }
    if (rule.kind === 'error_rate') {
      const rate = group.errors / group.count;
      observations.push(
        judged({
          subject,
          firing: rate >= rule.threshold,
          summary: {
            firing: `Error rate ${round(rate * 100)}% over the last ${window} (${scope(subject)}), threshold ${round(rule.threshold * 100)}%`,
            clear: `Error rate back to ${round(rate * 100)}% (${scope(subject)})`,
          },
          details: {
            error_rate: round(rate),
            errors: group.errors,
            requests: group.count,
            threshold: rule.threshold,
            window_ms: rule.window_ms,
          },
        }),
      );
      continue;
    }
    const latency = group.latency / group.count;
    observations.push(
      judged({
        subject,
        firing: latency >= rule.threshold_ms,
        summary: {
          firing: `Latency ${rule.percentile} ${Math.round(latency)} ms over the last ${window} (${scope(subject)}), threshold ${rule.threshold_ms} ms`,
          clear: `Latency ${rule.percentile} back to ${Math.round(latency)} ms (${scope(subject)})`,
        },
        details: {
          [`latency_${rule.percentile}_ms`]: Math.round(latency),
          requests: group.count,
          threshold_ms: rule.threshold_ms,
          window_ms: rule.window_ms,
        },
      }),
    );
  }
  return observations;
}

/** A level condition's observation: one of two summaries, by whether it fires. */
function judged(options: {
  subject: string;
  firing: boolean;
  summary: { firing: string; clear: string };
  details: Record<string, unknown>;
}): Observation {
  const { subject, firing, summary, details } = options;
  return {
    subject,
    status: firing ? 'firing' : 'clear',
    summary: firing ? summary.firing : summary.clear,
    details,
  };
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}

function minutes(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} min` : `${Math.round(ms / 1000)} s`;
}
