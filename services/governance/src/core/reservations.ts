import { EMPTY_USAGE, GatewayError, type Metrics, modelLabel, notFound } from '@gw/shared';
import type { Store } from '@gw/shared/store';
import { costBreakdown } from './cost-parts.ts';
import { settlementPlanSchema } from './governance-messages.ts';
import type { SettlementPlan, SettleRequest, SettleResult } from './governance-service.ts';
import type { PriceCatalog } from './pricing.ts';
import { settlementAdjustments } from './settlement.ts';

/** Unanswered admissions remembered for release at once (a Redis outage under heavy load). */
const UNANSWERED_LIMIT = 10_000;

/**
 * Reservations this process admitted, remembered until their settle so that it need not read them back (one
 * Redis round trip a request). Bounded: past it the oldest are forgotten, and their settles read the store.
 */
const REMEMBERED_RESERVATIONS = 50_000;

/** How often the reservations of unanswered admissions are tried again while Redis does not answer. */
const RELEASE_INTERVAL_MS = 1_000;

/**
 * How long a batch's charge is remembered: its completed batch object read again within it (a client polling
 * it, a dashboard, a job run again) is charged nothing.
 */
const BATCH_CHARGE_TTL_MS = 7 * 24 * 3_600_000;

/**
 * What a process knows of the reservations it admitted, and their settles: the plans it stored (so a settle
 * here reads nothing back), the admissions whose answer was lost (released once the store answers again), and
 * the settles running here (a retry racing its first try shares it). The store holds the truth: a settle
 * applies once there however many race.
 */
export class Reservations {
  private readonly store: Store;
  private readonly prices: PriceCatalog;
  private readonly metrics: Metrics | undefined;
  /** Reservation id → what admission stored for it (the plan and admitted alternative), until settled. */
  private readonly admitted = new Map<string, { plan: SettlementPlan; alternative: number }>();
  /** Reservations whose admission failed without an answer: released (if they exist) once Redis answers. */
  private readonly unanswered = new Map<string, SettlementPlan>();
  private releaseTimer: NodeJS.Timeout | undefined;
  /** Settles running in this process, by reservation id. */
  private readonly settling = new Map<string, Promise<SettleResult>>();

  constructor(dependencies: {
    store: Store;
    /** What a settle charges (the admission's own catalog: prices round at random, each charge once). */
    prices: PriceCatalog;
    /** `gw_cost_usd_total`: what settled requests were charged. */
    metrics?: Metrics | undefined;
  }) {
    this.store = dependencies.store;
    this.prices = dependencies.prices;
    this.metrics = dependencies.metrics;
  }

  /**
   * Keeps what admission stored for a reservation until its settle (the oldest forgotten past the bound): the
   * plan itself, so a settle here parses nothing. `alternative` is the admitted one (-1: none).
   */
  remember(plan: SettlementPlan, alternative: number): void {
    if (this.admitted.size >= REMEMBERED_RESERVATIONS) {
      const oldest = this.admitted.keys().next().value;
      if (oldest !== undefined) this.admitted.delete(oldest);
    }
    this.admitted.set(plan.reservationId, { plan, alternative });
  }

  /**
   * Charges a request against the reservation admission recorded: the plan (counters, reserved amounts, the
   * admitted alternative) is the stored one, never the caller's copy, so a forged or stale plan cannot hand a
   * budget back; a reservation that is not open (settled already, or never made here) is refused.
   */
  settle(request: SettleRequest): Promise<SettleResult> {
    // The same reservation settled again while its settle runs here (a retry racing its first try) gets that
    // settle's answer: the store would apply it once anyway.
    const id = request.settlement.reservationId;
    const running = this.settling.get(id);
    if (running) return running;
    const settling = this.settleOnce(request).finally(() => this.settling.delete(id));
    this.settling.set(id, settling);
    return settling;
  }

  private async settleOnce(request: SettleRequest): Promise<SettleResult> {
    const id = request.settlement.reservationId;
    const unsettled = () => notFound(`open reservation ${id} (settled already, or never made)`);
    // What this process admitted it knows as it stored it; anything else is read back, through its schema.
    const remembered = this.admitted.get(id);
    const stored = remembered ?? (await this.store.readReservation(id));
    if (!stored) throw unsettled();
    const plan: SettlementPlan =
      'plan' in stored ? stored.plan : settlementPlanSchema.parse(JSON.parse(stored.payload));
    const reservedProvider = plan.alternativeProviders[stored.alternative];
    const settlement = reservedProvider === undefined ? plan : { ...plan, reservedProvider };
    const charging = await this.withoutChargedBatches({ ...request, settlement });
    const { adjustments, charged, answerMicros } = settlementAdjustments(charging, this.prices);
    const applied = await this.store.settleReservation({ id, adjustments });
    // Forgotten once the store answered: a retry after a lost answer settles the same plan again rather than
    // reading a reservation that try may have closed (the store applies it once; allowances owe that retry the
    // slices' part, allowance-store.ts).
    this.admitted.delete(id);
    // Settled already (by the sweeper, or another settle of it): as a read would have found nothing.
    if (!applied && remembered) throw unsettled();
    if (applied && request.provider) {
      this.metrics?.cost.inc(
        { provider: request.provider, model: modelLabel(request.usage.batch?.model ?? request.model) },
        answerMicros / 1_000_000,
      );
    }
    return { cost: charged.total / 1_000_000, cost_breakdown: costBreakdown(charged) };
  }

  /**
   * The request with the usage of each batch charged before taken out (docs/pricing.md "Batches"): a batch's
   * usage comes with every read of its completed batch object, and is charged at the first one only, whichever
   * process settles it. The claim is the reservation's, so a retry of this settle still charges it.
   */
  private async withoutChargedBatches(request: SettleRequest): Promise<SettleRequest> {
    const holder = request.settlement.reservationId;
    const uncharged = async <Call extends Pick<SettleRequest, 'provider' | 'usage'>>(call: Call) => {
      const batch = call.usage.batch;
      if (!batch) return call;
      const claimed = await this.store.claim(
        `batch:${call.provider}:${batch.id}`,
        holder,
        BATCH_CHARGE_TTL_MS,
      );
      return claimed === holder ? call : { ...call, usage: EMPTY_USAGE };
    };
    const [answer, calls] = await Promise.all([
      uncharged(request),
      Promise.all((request.calls ?? []).map(uncharged)),
    ]);
    return request.calls ? { ...answer, calls } : answer;
  }

  /**
   * An admission that failed without an answer (a command that timed out may still run once Redis answers
   * again: its reservation would hold budget for a request that was refused, then be charged by the sweeper).
   * Released every second until Redis answers (at most UNANSWERED_LIMIT kept: past it the sweeper's estimate
   * is the fallback); a reservation that does not exist (the admission never ran) is simply dropped.
   */
  releaseLater(plan: SettlementPlan): void {
    if (this.unanswered.size >= UNANSWERED_LIMIT) return;
    this.unanswered.set(plan.reservationId, plan);
    if (this.releaseTimer) return;
    this.releaseTimer = setInterval(() => this.releaseUnanswered(), RELEASE_INTERVAL_MS);
    this.releaseTimer.unref();
  }

  private releaseUnanswered(): void {
    for (const [id, plan] of this.unanswered) {
      this.settle({ requestId: id, settlement: plan, provider: '', model: '', usage: EMPTY_USAGE }).then(
        () => this.unanswered.delete(id),
        (error: unknown) => {
          if (error instanceof GatewayError && error.type === 'not_found') this.unanswered.delete(id);
        },
      );
    }
    if (this.unanswered.size === 0) {
      clearInterval(this.releaseTimer);
      this.releaseTimer = undefined;
    }
  }

  /** Stops releasing unanswered admissions (what is left is the sweeper's). */
  close(): void {
    clearInterval(this.releaseTimer);
    this.releaseTimer = undefined;
  }
}
