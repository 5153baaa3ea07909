import type { Logger } from '@gw/shared';
import type { CounterAdjustment, Store } from '@gw/shared/store';
import type { AdmissionCheck, AdmissionChecks } from './admission-checks.ts';
import { settlementPlanSchema } from './governance-messages.ts';
import type { SettlementCounter, SettlementPlan, SettleRequest } from './governance-service.ts';
import type { ConfiguredTarget } from './plan-targets.ts';
import type { PriceCatalog } from './pricing.ts';

/** The counters settlement charges (budgets in micro-dollars, tokens), with what admission reserved. */
function settlementCounters(checks: AdmissionCheck[]): SettlementCounter[] {
  return checks.flatMap(({ check, meaning }) =>
    meaning.kind === 'requests'
      ? []
      : [{ key: check.key, kind: meaning.kind, reserved: check.amount, expireAtMs: check.expireAtMs }],
  );
}

/**
 * What settlement of an admitted request needs, kept as its reservation: the counters to charge, what each
 * alternative reserves, and an estimate the sweeper charges when no Settle comes.
 */
export function settlementPlan(options: {
  /** The request's id: a request is admitted once, however many replicas are asked (a lost answer). */
  requestId: string;
  virtualKeyId: string;
  targets: ConfiguredTarget[];
  checks: AdmissionChecks;
  /**
   * What admission reserved: the prompt's estimate and the completion tokens reserved for the answer (the
   * expected completion, or the worst case under strict budgets). A request whose settle never comes is charged
   * this, not the most it could have cost: a killed ingress's requests are mostly ordinary ones.
   */
  estimate: { promptTokens: number; completionTokens: number };
  deadlineMs: number;
}): SettlementPlan {
  const { targets, checks, estimate } = options;
  const first = targets[0]!;
  return {
    reservationId: `res_${options.requestId}`,
    virtualKeyId: options.virtualKeyId,
    counters: settlementCounters(checks.required),
    // Amounts an alternative reserves if it is the admitted one; `reservedProvider` says which one was.
    providerCounters: Object.fromEntries(
      targets.map((target, index) => [target.provider, settlementCounters(checks.alternatives[index] ?? [])]),
    ),
    alternativeProviders: targets.map((target) => target.provider),
    deadlineMs: options.deadlineMs,
    estimate: {
      provider: first.provider,
      model: first.model,
      usage: {
        prompt_tokens: estimate.promptTokens,
        completion_tokens: estimate.completionTokens,
        total_tokens: estimate.promptTokens + estimate.completionTokens,
      },
    },
  };
}

/**
 * What a finished request changes on each counter: its real cost or tokens, less what admission reserved.
 * The key's and owners' counters are charged whatever provider served; a provider config's only for the calls
 * its provider served, and its reservation is released from the one that was reserved.
 */
/**
 * The counter changes of a settle, and what it charges a request's budgets in micro-USD (its answer and side
 * calls, each priced once: prices round at random, so the charge and the adjustments must share one pricing).
 */
export function settlementAdjustments(
  request: SettleRequest,
  prices: PriceCatalog,
): { adjustments: CounterAdjustment[]; chargedMicros: number } {
  const plan = request.settlement;
  // The answer and every side call (a cache lookup's embedding), each priced by its own model.
  const charges = [request, ...(request.calls ?? [])].map((call) => ({
    provider: call.provider,
    cost: prices.costMicros(call.model, call.usage),
    tokens: call.usage.total_tokens,
  }));
  const chargedMicros = charges.reduce((total, charge) => total + charge.cost, 0);
  const actual = (counter: SettlementCounter, provider?: string) => {
    let total = 0;
    for (const charge of charges) {
      if (provider === undefined || charge.provider === provider)
        total += counter.kind === 'budget' ? charge.cost : charge.tokens;
    }
    return total;
  };
  const adjustments = plan.counters.map((counter) => ({
    key: counter.key,
    delta: actual(counter) - counter.reserved,
    expireAtMs: counter.expireAtMs,
  }));
  for (const [provider, counters] of Object.entries(plan.providerCounters)) {
    for (const counter of counters) {
      const charged = actual(counter, provider);
      const reserved = provider === plan.reservedProvider ? counter.reserved : 0;
      adjustments.push({ key: counter.key, delta: charged - reserved, expireAtMs: counter.expireAtMs });
    }
  }
  return { adjustments, chargedMicros };
}

/**
 * Charges reservations whose Settle never came (a process died mid-request) at their estimate: what admission
 * reserved for them, so their counters end where admission left them.
 */
export async function sweepUnsettled(options: {
  store: Store;
  logger: Logger;
  now: number;
  settle: (request: SettleRequest) => Promise<unknown>;
}): Promise<number> {
  const due = await options.store.dueReservations(options.now, 200);
  let charged = 0;
  for (const { id, payload } of due) {
    try {
      // Settle reads the reservation again (its admitted alternative included) and charges the estimate.
      const plan = settlementPlanSchema.parse(JSON.parse(payload));
      await options.settle({ requestId: id, settlement: plan, ...plan.estimate });
      charged++;
    } catch (error) {
      options.logger.error({ err: error, reservation: id }, 'could not charge an unsettled reservation');
    }
  }
  if (charged > 0) options.logger.warn({ charged }, 'charged unsettled reservations at their estimate');
  return charged;
}
