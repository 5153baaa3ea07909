import { randomUUID } from 'node:crypto';
import type {
  AdmitRequest,
  AdmitResult,
  CounterAdjustment,
  CounterCheck,
  CounterName,
  DueReservation,
  MessageHandler,
  SettleReservationRequest,
  SliceSource,
  Store,
} from './store.ts';

// Allowances (docs/governance.md "Allowances"): an ingress admits governed requests against slices of the
// counters it holds, taken from each owner's counter off the request path, and falls back to the store's exact
// admission for a request one of whose counters has no slice with room.

export interface AllowanceOptions {
  /** The store slices are taken from, and that admits exactly what no slice covers. */
  store: Store & SliceSource;
  /** This process's id in the counters' slice records; random by default. */
  holder?: string;
  /** How long a slice is held without a renewal before another ingress may reclaim its unarmed part. */
  leaseMs?: number;
  /**
   * How often slices are renewed (reporting what was spent since, so a usage read counts a settle within about
   * this long), returned when their period ended or idle.
   */
  tickMs?: number;
  now?: () => number;
  /** Told about failures that have no caller (a refill, a return, a record). */
  onError?: (error: unknown) => void;
  /** Told how each admission was decided (`gw_governance_admissions_total`). */
  onAdmission?: (path: keyof AllowanceStats) => void;
}

/** A slice is sized for about this much of the ingress's recent traffic on its counter. */
const SLICE_SECONDS = 2;
/** A slice is at most this share of its counter's limit (so many ingresses can hold one each). */
const MAX_SLICE_SHARE = 20;
/** A slice holds at least this many of the requests it serves. */
const MIN_SLICE_REQUESTS = 4;
/** A slice unused this long goes back. */
const IDLE_RETURN_MS = 30_000;
/**
 * A slice call unanswered this long means Redis is stalled: admission goes to the store (which fails within its
 * command timeout) rather than serving from slices that can be neither refilled nor recorded against.
 */
const STALLED_MS = 250;

/** At most this many settles whose journal call failed are remembered for their retries. */
const UNANSWERED_SETTLES = 10_000;

/** One counter's slice as this ingress holds it. */
interface HeldSlice {
  counter: CounterName;
  limit: number;
  expireAtMs: number;
  taken: number;
  armed: number;
  used: number;
  /** A take was refused: admissions against it are exact until it is retried at the next tick. */
  exhausted: boolean;
  refilling: boolean;
  /** A renewal (with a report of what it spent) is under way. */
  reporting: boolean;
  /** Settles changed what it used since its last call: the next tick reports it. */
  unreported: boolean;
  /** What the latest request needed of it (the least a slice must hold). */
  unit: number;
  bucket: { startMs: number; amount: number; perSecond: number };
  lastUseMs: number;
  lastCallMs: number;
}

/** Admissions answered from slices (`local`) and by the store (`exact`: a Redis round trip on the path). */
export interface AllowanceStats {
  local: number;
  exact: number;
}

/**
 * A Store that admits from slices while they last. Every other operation is the wrapped store's. `close()`
 * gives back what the slices hold unspent; the wrapped store stays open (its owner closes it).
 */
export class AllowanceStore implements Store {
  private readonly store: Store & SliceSource;
  private readonly holder: string;
  private readonly leaseMs: number;
  private readonly now: () => number;
  private readonly reportError: (error: unknown) => void;
  private readonly slices = new Map<string, HeldSlice>();
  /**
   * Settles whose journal call failed after their slices' part was made (their close may have happened), with
   * what they sent the counters.
   */
  private readonly unanswered = new Map<string, CounterAdjustment[]>();
  private readonly ticker: NodeJS.Timeout;
  private readonly stats: AllowanceStats = { local: 0, exact: 0 };
  private readonly onAdmission: ((path: keyof AllowanceStats) => void) | undefined;
  private draining: Promise<void> | undefined;
  /** When each unanswered slice call was sent. */
  private readonly pending = new Set<{ sentMs: number }>();
  private lastFailureMs = 0;
  private lastSuccessMs = 0;

  constructor(options: AllowanceOptions) {
    this.store = options.store;
    this.holder = options.holder ?? randomUUID();
    this.leaseMs = options.leaseMs ?? 10_000;
    this.now = options.now ?? Date.now;
    this.reportError = options.onError ?? ((error) => process.emitWarning(String(error)));
    this.onAdmission = options.onAdmission;
    const tickMs = options.tickMs ?? 1_000;
    this.ticker = setInterval(() => this.tick(tickMs), tickMs);
    this.ticker.unref();
  }

  /** How many admissions were answered from slices and how many by the store. */
  admissions(): AllowanceStats {
    return { ...this.stats };
  }

  async admit(request: AdmitRequest): Promise<AdmitResult> {
    const checks = [...request.required, ...request.alternatives.flat()];
    // Each check's slice is looked up several times in an admission: its id is built once.
    const ids = checks.map(sliceId);
    const now = this.now();
    for (let index = 0; index < checks.length; index++) this.noteDemand(checks[index]!, ids[index]!, now);
    const local =
      request.reservation && this.healthy(now) ? this.admitLocally(request, { checks, ids }) : undefined;
    this.refillAhead(checks, ids);
    const path = local ? 'local' : 'exact';
    this.stats[path]++;
    this.onAdmission?.(path);
    return local ?? this.store.admit(request);
  }

  async settleReservation(request: SettleReservationRequest): Promise<boolean> {
    // A settle's adjustments are made in the slice held: what is given back lowers what it used, what a request
    // used beyond its reservation comes out of it while it has armed room (tokens are counted at settle). The
    // rest goes to the counters, with the journal's close (which alone when there is nothing for them).
    // The slices' part is made before the close, as the store makes the counters' part: a close whose answer is
    // lost has it behind it, whichever process its retry reaches (a retry elsewhere finds the reservation closed
    // and settles nothing). A close that finds the reservation closed already (the sweeper, or another process's
    // try) takes it back.
    const earlier = this.unanswered.get(request.id);
    const inSlices: Array<{ slice: HeldSlice; delta: number }> = [];
    // A retry here of a settle whose answer was lost sends what that try sent: its slices' part was made then.
    const toCounters: CounterAdjustment[] = earlier ?? [];
    if (!earlier) {
      for (const adjustment of request.adjustments) {
        const slice = this.slices.get(sliceId(adjustment));
        if (slice && slice.taken > 0 && slice.used + adjustment.delta <= slice.armed) {
          slice.used += adjustment.delta;
          slice.unreported = true;
          inSlices.push({ slice, delta: adjustment.delta });
        } else toCounters.push(adjustment);
      }
    }
    let applied: boolean;
    try {
      applied = await this.store.settleReservation({ id: request.id, adjustments: toCounters });
    } catch (error) {
      if (!earlier && inSlices.length > 0) this.remember(request.id, toCounters);
      throw error;
    }
    this.unanswered.delete(request.id);
    if (!applied && !earlier) {
      for (const { slice, delta } of inSlices) slice.used -= delta;
      return false;
    }
    // What the slices spent is reported at their next renewal (within a tick), not before the settle answers:
    // a report per slice and settle was most of governance's Redis traffic (`pnpm bench:shards`), and a usage
    // read a second behind costs nobody a request.
    for (const { slice, delta } of inSlices) {
      // What settles spend counts in the slice's rate too (tokens are all spent at settle).
      if (delta > 0) slice.bucket.amount += delta;
      this.refill(slice, slice.limit);
    }
    return applied;
  }

  /**
   * Remembers a settle whose journal call failed (its close may have happened), with what it sent the counters,
   * for a retry here; the oldest forgotten past UNANSWERED_SETTLES.
   */
  private remember(id: string, toCounters: CounterAdjustment[]): void {
    this.unanswered.set(id, toCounters);
    if (this.unanswered.size > UNANSWERED_SETTLES) {
      this.unanswered.delete(this.unanswered.keys().next().value!);
    }
  }

  /** Reports what a slice spent and renews its lease, unless a call of it is under way. */
  private report(slice: HeldSlice): void {
    if (slice.reporting || slice.refilling) return;
    slice.reporting = true;
    void this.call(slice, { want: 0, step: 0, limit: slice.limit }).finally(() => {
      slice.reporting = false;
    });
  }

  /**
   * Whether Redis answers: connected, its last slice call did not fail, and none waits past STALLED_MS. Slices
   * serve only while it does, so that a Redis that is down or stalled is seen from outside as it is without them.
   */
  private healthy(now: number): boolean {
    if (!this.store.connected() || this.lastFailureMs > this.lastSuccessMs) return false;
    for (const call of this.pending) if (now - call.sentMs > STALLED_MS) return false;
    return true;
  }

  /**
   * The admission of a request every counter of which has a slice with room (required ones and every
   * alternative's), spent from them at once; undefined when one has none (the store then admits it exactly).
   */
  private admitLocally(
    request: AdmitRequest,
    /** Every check, required ones first then each alternative's in order, with its slice id. */
    all: { checks: CounterCheck[]; ids: string[] },
  ): AdmitResult | undefined {
    const reservation = request.reservation!;
    const { checks, ids } = all;
    const covered = (check: CounterCheck, id: string) => {
      const slice = this.slices.get(id);
      if (!slice || (slice.exhausted && slice.armed - slice.used < Math.max(check.need, check.amount)))
        return false;
      if (check.limit < slice.limit) {
        // The limit was lowered: what the slice holds goes back, and the counter is admitted exactly.
        this.giveBack(slice);
        return false;
      }
      return slice.used + Math.max(check.need, check.amount) <= slice.armed;
    };
    for (let index = 0; index < checks.length; index++) {
      if (!covered(checks[index]!, ids[index]!)) return undefined;
    }
    // The required checks and the first alternative's are spent: they lead the list.
    const spent = request.required.length + (request.alternatives[0]?.length ?? 0);
    for (let index = 0; index < spent; index++) this.slices.get(ids[index]!)!.used += checks[index]!.amount;
    const alternative = request.alternatives.length > 0 ? 0 : -1;
    // Recorded off the path (the settle that follows is sent after it on the same connection).
    this.store.recordReservation(reservation, alternative).then(
      (recorded) => {
        // Admitted before (a request asked twice): its first admission counted it.
        if (!recorded) for (let index = 0; index < spent; index++) this.unspend(ids[index]!, checks[index]!);
      },
      (error: unknown) => this.reportError(error),
    );
    return { allowed: true, passing: request.alternatives.map((_, index) => index) };
  }

  private unspend(id: string, check: CounterCheck): void {
    const slice = this.slices.get(id);
    if (slice) slice.used -= check.amount;
  }

  /** Counts what a request asks of a counter into its recent rate, making its slice record when it has none. */
  private noteDemand(check: CounterCheck, id: string, now: number): void {
    let slice = this.slices.get(id);
    if (!slice || slice.expireAtMs !== check.expireAtMs) {
      if (slice) this.giveBack(slice);
      slice = {
        counter: { key: check.key, owner: check.owner },
        limit: check.limit,
        expireAtMs: check.expireAtMs,
        taken: 0,
        armed: 0,
        used: 0,
        exhausted: false,
        refilling: false,
        reporting: false,
        unreported: false,
        unit: 0,
        bucket: { startMs: now, amount: 0, perSecond: 0 },
        lastUseMs: now,
        lastCallMs: 0,
      };
      this.slices.set(id, slice);
    }
    const unit = Math.max(check.need, check.amount);
    slice.unit = unit;
    slice.lastUseMs = now;
    const bucket = slice.bucket;
    if (now - bucket.startMs >= 1_000) {
      bucket.perSecond = (bucket.amount * 1_000) / (now - bucket.startMs);
      bucket.startMs = now;
      bucket.amount = 0;
    }
    bucket.amount += unit;
  }

  /** What a slice of the counter should hold now: about SLICE_SECONDS of recent traffic; 0 when too small a limit. */
  private sliceSize(slice: HeldSlice, limit: number): number {
    const most = Math.floor(limit / MAX_SLICE_SHARE);
    const least = slice.unit * MIN_SLICE_REQUESTS;
    if (slice.unit === 0 || most < least) return 0;
    const recent = Math.max(slice.bucket.perSecond, slice.bucket.amount);
    return Math.min(most, Math.max(least, Math.ceil(recent * SLICE_SECONDS)));
  }

  /** Asks for more of every counter whose slice is below half of what it should hold (one ask at a time each). */
  private refillAhead(checks: CounterCheck[], ids: string[]): void {
    for (let index = 0; index < checks.length; index++) {
      const slice = this.slices.get(ids[index]!);
      if (slice) this.refill(slice, checks[index]!.limit);
    }
  }

  /** Asks for more of a slice below half of what it should hold, unless an ask is under way or was refused. */
  private refill(slice: HeldSlice, limit: number): void {
    if (slice.refilling || slice.exhausted) return;
    const size = this.sliceSize(slice, limit);
    if (size === 0 || slice.armed - slice.used >= size / 2) return;
    slice.limit = Math.min(slice.limit, limit);
    slice.refilling = true;
    void this.call(slice, { want: slice.taken - slice.used < size ? size : 0, step: size, limit }).finally(
      () => {
        slice.refilling = false;
      },
    );
  }

  /** One take-slice call for a slice (a take, an arming, or a renewal with a report); failures are reported. */
  private call(slice: HeldSlice, ask: { want: number; step: number; limit: number }): Promise<void> {
    slice.lastCallMs = this.now();
    slice.unreported = false;
    const sent = { sentMs: slice.lastCallMs };
    this.pending.add(sent);
    return this.store
      .takeSlice({
        counter: slice.counter,
        holder: this.holder,
        want: ask.want,
        limit: ask.limit,
        used: slice.used,
        step: ask.step,
        leaseMs: this.leaseMs,
        expireAtMs: slice.expireAtMs,
      })
      .then(
        (taken) => {
          if (taken.fresh && slice.taken > 0) {
            // Its lease ended (this process stalled): another ingress reclaimed what it had not armed. What
            // it had armed was counted, and is forfeited with the old record.
            slice.used = 0;
          }
          slice.taken = taken.taken;
          slice.armed = taken.armed;
          slice.limit = ask.limit;
          if (ask.want > 0 && !taken.granted) slice.exhausted = true;
          this.lastSuccessMs = this.now();
        },
        (error: unknown) => {
          this.lastFailureMs = this.now();
          this.reportError(error);
        },
      )
      .finally(() => {
        this.pending.delete(sent);
      });
  }

  /**
   * Reports what settles spent and renews held slices, gives back those whose period ended or that went unused,
   * retries exhausted ones.
   */
  private tick(tickMs: number): void {
    const now = this.now();
    for (const slice of this.slices.values()) {
      if (slice.expireAtMs <= now || now - slice.lastUseMs >= IDLE_RETURN_MS) this.giveBack(slice);
      else if (slice.taken > 0 && (slice.unreported || now - slice.lastCallMs >= tickMs)) this.report(slice);
      slice.exhausted = false;
    }
  }

  /** Gives back what a slice holds unspent, and forgets it. */
  private giveBack(slice: HeldSlice): Promise<void> {
    this.slices.delete(sliceId(slice.counter));
    if (slice.taken === 0) return Promise.resolve();
    return this.store.returnSlice({ counter: slice.counter, holder: this.holder, used: slice.used }).then(
      () => {},
      (error: unknown) => this.reportError(error),
    );
  }

  /** Gives back every slice (a draining ingress, before it exits); the wrapped store stays open. */
  close(): Promise<void> {
    this.draining ??= (async () => {
      clearInterval(this.ticker);
      await Promise.all([...this.slices.values()].map((slice) => this.giveBack(slice)));
    })();
    return this.draining;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  // Everything else is the wrapped store's.

  get(collection: string, id: string): Promise<unknown> {
    return this.store.get(collection, id);
  }
  list(collection: string): Promise<Array<{ id: string; value: unknown }>> {
    return this.store.list(collection);
  }
  put(collection: string, id: string, value: unknown): Promise<void> {
    return this.store.put(collection, id, value);
  }
  delete(collection: string, id: string): Promise<boolean> {
    return this.store.delete(collection, id);
  }
  readReservation(id: string): Promise<DueReservation | undefined> {
    return this.store.readReservation(id);
  }
  dueReservations(nowMs: number, limit: number): Promise<DueReservation[]> {
    return this.store.dueReservations(nowMs, limit);
  }
  reportCall(requestId: string, report: string, ttlMs: number): Promise<void> {
    return this.store.reportCall(requestId, report, ttlMs);
  }
  readCallReports(requestId: string): Promise<string[]> {
    return this.store.readCallReports(requestId);
  }
  readCounters(counters: ReadonlyArray<string | CounterName>): Promise<number[]> {
    return this.store.readCounters(counters);
  }
  claim(name: string, holder: string, ttlMs: number): Promise<string> {
    return this.store.claim(name, holder, ttlMs);
  }
  publish(channel: string, message: string): Promise<void> {
    return this.store.publish(channel, message);
  }
  changeCount(channel: string): Promise<number> {
    return this.store.changeCount(channel);
  }
  markEpoch(candidate: string): Promise<string> {
    return this.store.markEpoch(candidate);
  }
  readEpoch(): Promise<string | undefined> {
    return this.store.readEpoch();
  }
  subscribe(channel: string, handler: MessageHandler): Promise<() => Promise<void>> {
    return this.store.subscribe(channel, handler);
  }
}

/** A slice's id: its counter's owner and key. */
function sliceId(counter: CounterName): string {
  return `${counter.owner ?? ''}\n${counter.key}`;
}
