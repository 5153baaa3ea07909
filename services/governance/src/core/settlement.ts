import type { CounterAdjustment } from '@gw/shared/store';
import type { AdmissionCheck } from './admission-checks.ts';
import type { SettlementCounter, SettlementPlan, SettleRequest } from './governance-service.ts';
import type { PriceCatalog } from './pricing.ts';

/** The counters settlement charges (budgets in micro-dollars, tokens), with what admission reserved. */
export function settlementCounters(checks: AdmissionCheck[]): SettlementCounter[] {
  return checks.flatMap(({ check, meaning }) =>
    meaning.kind === 'requests'
      ? []
      : [{ key: check.key, kind: meaning.kind, reserved: check.amount, expireAtMs: check.expireAtMs }],
  );
}

/**
 * What a finished request changes on each counter: its real cost or tokens, less what admission reserved.
 * The key's and owners' counters are charged whatever provider served; a provider config's only for the one
 * that served, and its reservation is released from the one that was reserved.
 */
export function settlementAdjustments(request: SettleRequest, prices: PriceCatalog): CounterAdjustment[] {
  const plan = request.settlement;
  const cost = prices.costMicros(request.model, request.usage);
  const actual = (counter: SettlementCounter) =>
    counter.kind === 'budget' ? cost : request.usage.total_tokens;
  const adjustments = plan.counters.map((counter) => ({
    key: counter.key,
    delta: actual(counter) - counter.reserved,
    expireAtMs: counter.expireAtMs,
  }));
  for (const [provider, counters] of Object.entries(plan.providerCounters)) {
    for (const counter of counters) {
      const charged = provider === request.provider ? actual(counter) : 0;
      const reserved = provider === plan.reservedProvider ? counter.reserved : 0;
      adjustments.push({ key: counter.key, delta: charged - reserved, expireAtMs: counter.expireAtMs });
    }
  }
  return adjustments;
}

/** The settle the sweeper makes for a reservation nobody settled: its plan, charged at its estimate. */
export function sweptSettle(options: {
  id: string;
  plan: SettlementPlan;
  alternative: number;
}): SettleRequest {
  const { plan } = options;
  const reservedProvider = plan.alternativeProviders[options.alternative];
  const settlement = reservedProvider === undefined ? plan : { ...plan, reservedProvider };
  return { requestId: options.id, settlement, ...plan.estimate };
}
