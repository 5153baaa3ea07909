import type { Store } from './store/store.ts';

// What an orchestrator asks a process (docs/kubernetes.md "Probes"): is it ready to take work (readiness: its
// dependencies answer and it is not draining), and is it alive (liveness: only a wedged process is not).

/** A dependency readiness waits for: undefined when it is fine, else what is wrong, in a few words. */
export type ReadinessCheck = () => Promise<string | undefined> | string | undefined;

/** `/health/ready`'s answer: `ready`, or why not, with each check's result (`ok`, or what is wrong). */
export interface ReadinessReport {
  status: 'ready' | 'not_ready' | 'draining';
  checks: Record<string, string>;
}

/** `/health/live`'s answer: `stalled` when the event loop stood still longer than the bound. */
export interface LivenessReport {
  status: 'live' | 'stalled';
  /** How late the last heartbeat ran (ms): how long the event loop stood still then. */
  event_loop_stall_ms: number;
}

/** How long one evaluation of the checks answers for (the probes of every client share it). */
const REPORT_MS = 1_000;
/** Most time a check may take before it counts as failed. */
const CHECK_TIMEOUT_MS = 2_000;
const HEARTBEAT_MS = 1_000;
/**
 * A heartbeat this late means the event loop stood still: no timer, request or I/O ran. A garbage collection of
 * a large heap takes well under a second; ten seconds is a process stuck in a loop or starved of CPU for good.
 */
const DEFAULT_STALL_MS = 10_000;

/**
 * A process's readiness and liveness. Readiness: every required check passes and the process is not draining
 * (from SIGTERM on: `drain`). Liveness: the heartbeat, a timer every second, ran less than the stall bound late
 * (and has run within it). Checks are evaluated at most once a second, whoever asks (kubelet probes, the gRPC
 * health checks of every client), concurrently, each bounded by CHECK_TIMEOUT_MS.
 */
export class Probes implements Disposable {
  private readonly checks = new Map<string, ReadinessCheck>();
  private drained = false;
  private last: { at: number; report: ReadinessReport } | undefined;
  private evaluating: Promise<ReadinessReport> | undefined;
  private readonly stallMs: number;
  private lastBeat = performance.now();
  private lastLateness = 0;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(options: { stallMs?: number } = {}) {
    this.stallMs = options.stallMs ?? DEFAULT_STALL_MS;
    this.heartbeat = setInterval(() => {
      const now = performance.now();
      this.lastLateness = Math.max(0, now - this.lastBeat - HEARTBEAT_MS);
      this.lastBeat = now;
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** Adds a dependency readiness waits for (named in the report). */
  require(name: string, check: ReadinessCheck): this {
    this.checks.set(name, check);
    this.last = undefined;
    return this;
  }

  /** From now on the process is draining: not ready, whatever the checks say. */
  drain(): void {
    this.drained = true;
  }

  get draining(): boolean {
    return this.drained;
  }

  async readiness(): Promise<ReadinessReport> {
    if (this.drained) return { status: 'draining', checks: {} };
    if (this.last && performance.now() - this.last.at < REPORT_MS) return this.last.report;
    this.evaluating ??= this.evaluate().finally(() => {
      this.evaluating = undefined;
    });
    const report = await this.evaluating;
    return this.drained ? { status: 'draining', checks: {} } : report;
  }

  liveness(): LivenessReport {
    // A heartbeat overdue now counts as much as one that ran late.
    const overdue = Math.max(0, performance.now() - this.lastBeat - HEARTBEAT_MS);
    const stall = Math.round(Math.max(this.lastLateness, overdue));
    return { status: stall > this.stallMs ? 'stalled' : 'live', event_loop_stall_ms: stall };
  }

  [Symbol.dispose](): void {
    clearInterval(this.heartbeat);
  }

  private async evaluate(): Promise<ReadinessReport> {
    const names = [...this.checks.keys()];
    const results = await Promise.all([...this.checks.values()].map(bounded));
    const checks: Record<string, string> = {};
    names.forEach((name, index) => {
      checks[name] = results[index] ?? 'ok';
    });
    const report: ReadinessReport = {
      status: results.every((result) => result === undefined) ? 'ready' : 'not_ready',
      checks,
    };
    this.last = { at: performance.now(), report };
    return report;
  }
}

/** A check's result within CHECK_TIMEOUT_MS; a check that throws or takes longer fails. */
async function bounded(check: ReadinessCheck): Promise<string | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer within ${CHECK_TIMEOUT_MS} ms`), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([Promise.resolve().then(check), late]);
  } catch (error) {
    return `failed: ${String((error as Error)?.message ?? error).slice(0, 200)}`;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The store answers: one read of its data marker. A failure counts once the store has failed for `graceMs` in a
 * row, so that a command lost to a busy moment does not take the process out of rotation (the store's own
 * command timeout, GW_REDIS_COMMAND_TIMEOUT_MS, bounds each read).
 */
export function storeCheck(store: Pick<Store, 'readEpoch'>, graceMs = 2_000): ReadinessCheck {
  let failingSince: number | undefined;
  return async () => {
    try {
      await store.readEpoch();
      failingSince = undefined;
      return undefined;
    } catch {
      const now = performance.now();
      failingSince ??= now;
      return now - failingSince >= graceMs ? 'unreachable' : undefined;
    }
  };
}

/** The HTTP status a probe's report answers with: 200 when ready or live, else 503. */
export function probeStatus(report: ReadinessReport | LivenessReport): 200 | 503 {
  return report.status === 'ready' || report.status === 'live' ? 200 : 503;
}
