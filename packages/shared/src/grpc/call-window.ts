/**
 * Bounds the calls a client has on the wire; the rest wait here, in order. A call's deadline then measures
 * how long its replica takes to answer, not how long a burst queues ahead of it inside the replica: a burst
 * of a thousand authorizations is answered in turn instead of timing out at the back of the replica's queue
 * after it was admitted there (admitted and unanswered, it would count against its key's limits unserved).
 * A call that waits longer than `maxWaitMs`, or finds `maxWaiting` calls waiting already, is refused before
 * anything was sent, so a refusal here changes nothing anywhere.
 */
export interface CallWindowSettings {
  /** Calls on the wire at once (the pool passes its replicas times the per-replica bound). */
  limit: () => number;
  maxWaiting: number;
  maxWaitMs: number;
  /** The error a refused call fails with. */
  refuse: (reason: string) => Error;
}

export class CallWindow {
  private readonly settings: CallWindowSettings;
  private inFlight = 0;
  private readonly waiting: Array<{ admit: () => void; timer: NodeJS.Timeout }> = [];

  constructor(settings: CallWindowSettings) {
    this.settings = settings;
  }

  /** Takes a slot: at once (undefined) when one is free, else a promise that resolves when one frees. */
  acquire(): Promise<void> | undefined {
    if (this.inFlight < this.settings.limit()) {
      this.inFlight++;
      return undefined;
    }
    if (this.waiting.length >= this.settings.maxWaiting)
      return Promise.reject(this.settings.refuse(`${this.waiting.length} calls are waiting already`));
    return new Promise((resolve, reject) => {
      const entry = {
        admit: () => {
          clearTimeout(entry.timer);
          this.inFlight++;
          resolve();
        },
        timer: setTimeout(() => {
          this.waiting.splice(this.waiting.indexOf(entry), 1);
          reject(this.settings.refuse(`no call finished within ${this.settings.maxWaitMs} ms`));
        }, this.settings.maxWaitMs),
      };
      this.waiting.push(entry);
    });
  }

  /** Gives a slot back; the longest-waiting call takes it. */
  release(): void {
    this.inFlight--;
    while (this.inFlight < this.settings.limit() && this.waiting.length > 0) this.waiting.shift()!.admit();
  }

  /** Calls on the wire and calls waiting (for tests and diagnostics). */
  counts(): { inFlight: number; waiting: number } {
    return { inFlight: this.inFlight, waiting: this.waiting.length };
  }
}
