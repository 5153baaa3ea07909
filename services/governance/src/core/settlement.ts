import { type CallReport, callReportSchema, EMPTY_USAGE, type Logger } from '@gw/shared';
import type { CounterAdjustment, Store } from '@gw/shared/store';
import type { AdmissionCheck, AdmissionChecks } from './admission-checks.ts';
import { addCosts, type CostMicros, NO_COST } from './cost-parts.ts';
import { settlementPlanSchema } from './governance-messages.ts';
import type { SettlementCounter, SettlementPlan, SettleRequest } from './governance-service.ts';
import type { ConfiguredTarget } from './plan-targets.ts';
import type { PriceCatalog } from './pricing.ts';

/** A reservation is named after its request: `res_<request id>`. */
const RESERVATION_PREFIX = 'res_';

/** The request a reservation was made for (its routers' call reports are under the request's id). */
function requestIdOf(reservationId: string): string {
  return reservationId.startsWith(RESERVATION_PREFIX)
    ? reservationId.slice(RESERVATION_PREFIX.length)
    : reservationId;
}

/** The counters settlement charges (budgets in micro-dollars, tokens), with what admission reserved. */
function settlementCounters(checks: AdmissionCheck[]): SettlementCounter[] {
  return checks.flatMap(({ check, meaning }) =>
    meaning.kind === 'requests'
      ? []
      : [
          {
            key: check.key,
            ...(check.owner !== undefined && { owner: check.owner }),
            kind: meaning.kind,
            reserved: check.amount,
            expireAtMs: check.expireAtMs,
          },
        ],
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
   * What the request is expected to cost: the prompt's estimate and the expected completion
   * (`expected_completion_tokens`, or less when max_tokens asks less), never the worst case strict budgets
   * reserve. A request whose settle never comes and of whose calls no router reported is charged this: a
   * killed process's requests are mostly ordinary ones.
   */
  estimate: { promptTokens: number; completionTokens: number };
  deadlineMs: number;
}): SettlementPlan {
  const { targets, checks, estimate } = options;
  const first = targets[0]!;
  return {
    reservationId: `${RESERVATION_PREFIX}${options.requestId}`,
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
): {
  adjustments: CounterAdjustment[];
  charged: CostMicros;
  /** What the answer alone cost (its side calls left out), priced in the same draw as `charged`. */
  answerMicros: number;
} {
  const plan = request.settlement;
  // The answer and every side call (a cache lookup's embedding), each priced by its own model.
  const charges = [request, ...(request.calls ?? [])].map((call) => {
    const parts = prices.cost(call, call.usage);
    return { provider: call.provider, cost: parts.total, parts, tokens: call.usage.total_tokens };
  });
  const charged = charges.reduce((total, charge) => addCosts(total, charge.parts), NO_COST);
  const actual = (counter: SettlementCounter, provider?: string) => {
    let total = 0;
    for (const charge of charges) {
      if (provider === undefined || charge.provider === provider)
        total += counter.kind === 'budget' ? charge.cost : charge.tokens;
    }
    return total;
  };
  const adjustments: CounterAdjustment[] = plan.counters.map((counter) => ({
    key: counter.key,
    owner: counter.owner,
    delta: actual(counter) - counter.reserved,
    expireAtMs: counter.expireAtMs,
  }));
  for (const [provider, counters] of Object.entries(plan.providerCounters)) {
    for (const counter of counters) {
      const charged = actual(counter, provider);
      const reserved = provider === plan.reservedProvider ? counter.reserved : 0;
      adjustments.push({
        key: counter.key,
        owner: counter.owner,
        delta: charged - reserved,
        expireAtMs: counter.expireAtMs,
      });
    }
  }
  return { adjustments, charged, answerMicros: charges[0]!.cost };
}

/** What a settle charges besides its counters: the answer (or the estimate) and any further calls. */
type Charge = Pick<SettleRequest, 'provider' | 'model' | 'usage' | 'calls'>;

/**
 * What a request whose settle never came is charged, from what its routers reported of its calls
 * (docs/governance.md "Lost calls"): the usage of every answer served; the prompt's estimate once when a call was
 * sent upstream but not metered (cancelled, a stream cut short); nothing when no call reached the upstream or
 * every attempt failed. Only when no router reported (killed with the call, or still working on it at the
 * deadline) is it the admission's estimate.
 */
function lostCallCharge(plan: SettlementPlan, reports: readonly CallReport[]): Charge {
  const { estimate } = plan;
  if (reports.length === 0) return estimate;
  const charges: Array<Pick<SettleRequest, 'provider' | 'model' | 'usage'>> = [];
  for (const report of reports) {
    if (report.outcome === 'answered') {
      charges.push({ provider: report.provider, model: report.model, usage: report.usage });
    }
  }
  if (reports.some((report) => report.outcome === 'unmetered')) {
    const promptTokens = estimate.usage.prompt_tokens;
    charges.push({
      provider: estimate.provider,
      model: estimate.model,
      usage: { prompt_tokens: promptTokens, completion_tokens: 0, total_tokens: promptTokens },
    });
  }
  const [first, ...calls] = charges;
  if (!first) return { provider: estimate.provider, model: estimate.model, usage: EMPTY_USAGE };
  return calls.length > 0 ? { ...first, calls } : first;
}

/** A request's call reports as its routers wrote them; one that fails its schema is left out, and logged. */
async function callReportsOf(store: Store, requestId: string, logger: Logger): Promise<CallReport[]> {
  const reports: CallReport[] = [];
  for (const text of await store.readCallReports(requestId)) {
    try {
      reports.push(callReportSchema.parse(JSON.parse(text)));
    } catch (error) {
      logger.warn({ err: error, requestId }, 'a call report that is not one was left out');
    }
  }
  return reports;
}

/**
 * Charges reservations whose Settle never came (a process died mid-request, or its ingress lost the call to a
 * router that was killed, frozen or late) from what the routers reported of the request's calls, and at their
 * estimate when none did (lostCallCharge).
 */
export async function sweepUnsettled(options: {
  store: Store;
  logger: Logger;
  now: number;
  settle: (request: SettleRequest) => Promise<unknown>;
}): Promise<number> {
  const due = await options.store.dueReservations(options.now, 200);
  let charged = 0;
  let estimated = 0;
  for (const { id, payload } of due) {
    try {
      // Settle reads the reservation again (its admitted alternative included) and charges what was served.
      const plan = settlementPlanSchema.parse(JSON.parse(payload));
      const requestId = requestIdOf(id);
      const reports = await callReportsOf(options.store, requestId, options.logger);
      await options.settle({ requestId, settlement: plan, ...lostCallCharge(plan, reports) });
      charged++;
      if (reports.length === 0) estimated++;
    } catch (error) {
      options.logger.error({ err: error, reservation: id }, 'could not charge an unsettled reservation');
    }
  }
  if (charged > 0) {
    options.logger.warn(
      { charged, estimated },
      'charged unsettled reservations (from call reports, else estimates)',
    );
  }
  return charged;
}
