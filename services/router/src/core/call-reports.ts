import {
  CALL_REPORT_TTL_MS,
  type CallReport,
  EMPTY_USAGE,
  type Logger,
  observeStream,
  type Usage,
} from '@gw/shared';
import type { Store } from '@gw/shared/store';
import type { StreamItem } from './router-service.ts';

/** Upstream attempts a routed call made (plan-execution.ts counts them as it sends them). */
export interface CallTally {
  attempts: number;
}

/**
 * Reports sent to the store and not yet answered, at most: past it (a Redis that stopped answering) a report is
 * dropped, and the settle of its call, if the ingress lost it, charges the admission estimate instead.
 */
const MAX_PENDING_REPORTS = 10_000;

/** What served an answer: the provider, the model the answer names and its usage. */
interface ServedUsage {
  provider: string;
  model: string;
  usage: Usage;
}

/**
 * The router's record of what it served (docs/governance.md "Lost calls"): when a routed call ends, how many
 * upstream attempts it sent and the usage of its answer go to the shared store under the request's id. Written
 * after the call ended and never awaited by it (the store pipelines the writes of a turn), so the answer's path
 * does not wait on it; the settle of a call its ingress lost track of reads it.
 */
export class CallReports {
  /** Where reports go; none where no settle can need them (the embedded gateway): calls are then only run. */
  private readonly store: Store | undefined;
  private readonly logger: Logger;
  private pending = 0;
  /** Whether the last write failed: a store outage is logged once, not once a call. */
  private failing = false;

  constructor(dependencies: { store: Store | undefined; logger: Logger }) {
    this.store = dependencies.store;
    this.logger = dependencies.logger;
  }

  /** Runs a whole call (a completion, an embedding) and reports how it ended. */
  async whole<Result>(
    call: { requestId: string; signal: AbortSignal },
    run: (tally: CallTally) => Promise<Result>,
    served: (result: Result) => ServedUsage,
  ): Promise<Result> {
    const tally: CallTally = { attempts: 0 };
    try {
      const result = await run(tally);
      this.record(call.requestId, { outcome: 'answered', attempts: tally.attempts, ...served(result) });
      return result;
    } catch (error) {
      this.record(call.requestId, unanswered(tally, call.signal.aborted));
      throw error;
    }
  }

  /**
   * A stream, reported when it ends however it ends: with the usage its chunks reported; without one (cut
   * short, or never metered) as unmetered once anything was sent upstream, so its prompt is charged. An
   * observer of the stream (observeStream), so the ingress's observers join it rather than add proxies; none
   * where there is no store to report to.
   */
  stream(
    call: { requestId: string; signal: AbortSignal },
    open: (tally: CallTally) => AsyncIterable<StreamItem>,
  ): AsyncIterable<StreamItem> {
    const tally: CallTally = { attempts: 0 };
    if (!this.store) return open(tally);
    const served: ServedUsage = { provider: '', model: '', usage: EMPTY_USAGE };
    let metered = false;
    return observeStream(open(tally), {
      item(item) {
        if (item.provider) served.provider = item.provider;
        if (!served.model) served.model = item.chunk.model;
        if (item.chunk.usage) {
          served.usage = item.chunk.usage;
          metered = true;
        }
      },
      end: () => {
        this.record(
          call.requestId,
          metered
            ? { outcome: 'answered', attempts: tally.attempts, ...served }
            : unanswered(tally, served.provider !== '' || call.signal.aborted),
        );
      },
    });
  }

  private record(requestId: string, report: CallReport): void {
    const store = this.store;
    if (!store || this.pending >= MAX_PENDING_REPORTS) return;
    this.pending++;
    store
      .reportCall(requestId, JSON.stringify(report), CALL_REPORT_TTL_MS)
      .then(
        () => {
          this.failing = false;
        },
        (error: unknown) => {
          if (!this.failing) this.logger.warn({ err: error }, 'could not report a routed call to the store');
          this.failing = true;
        },
      )
      .finally(() => {
        this.pending--;
      });
  }
}

/**
 * A call that ended without a metered answer: unmetered when an attempt went upstream and the upstream was
 * working on it (`started`: its caller left, or a stream began) and so read the prompt; failed otherwise.
 */
function unanswered(tally: CallTally, started: boolean): CallReport {
  return { outcome: tally.attempts > 0 && started ? 'unmetered' : 'failed', attempts: tally.attempts };
}
