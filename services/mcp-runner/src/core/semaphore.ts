/** Bounds how many calls run at once; the others wait in arrival order. */
export class Semaphore {
  private available: number;
  private readonly waiting: Array<() => void> = [];

  constructor(size: number) {
    this.available = size;
  }

  /**
   * Resolves with a release function once a slot is free. Rejects with the signal's reason when the signal
   * aborts first (the waiter leaves the line).
   */
  acquire(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    if (this.available > 0) {
      this.available -= 1;
      return Promise.resolve(this.releaser());
    }
    return new Promise((resolve, reject) => {
      const grant = () => {
        signal?.removeEventListener('abort', abandon);
        resolve(this.releaser());
      };
      const abandon = () => {
        const index = this.waiting.indexOf(grant);
        if (index !== -1) this.waiting.splice(index, 1);
        reject(signal?.reason);
      };
      this.waiting.push(grant);
      signal?.addEventListener('abort', abandon, { once: true });
    });
  }

  private releaser(): () => void {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.available += 1;
    };
  }
}
