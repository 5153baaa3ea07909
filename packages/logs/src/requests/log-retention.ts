import type { LogStore } from './log-store.ts';

const DAY_MS = 24 * 3_600_000;

export interface LogRetentionOptions {
  store: Pick<LogStore, 'deleteOlderThan'>;
  /** Days records are kept, read at every run (a live setting); 0 keeps them forever. */
  retentionDays: () => number;
  /** Time between runs; one hour by default. The first run is one interval after the start. */
  intervalMs?: number;
  onError?: (error: unknown) => void;
  /** Told how many records a run deleted. */
  onDeleted?: (count: number) => void;
}

/**
 * Retention by age (docs/logs.md): every interval, the store deletes records (and dropped counts) older than
 * the retention, in its small batches. One run at a time; the timer does not keep the process alive.
 */
export function startLogRetention(options: LogRetentionOptions): {
  run(): Promise<number>;
  /** Stops the timer and waits for a run in progress; disposing does the same. */
  stop(): Promise<void>;
} & AsyncDisposable {
  let running: Promise<number> | undefined;
  const run = (): Promise<number> => {
    running ??= (async () => {
      const days = options.retentionDays();
      if (days <= 0) return 0;
      return options.store.deleteOlderThan(Date.now() - days * DAY_MS);
    })()
      .then(
        (count) => {
          if (count > 0) options.onDeleted?.(count);
          return count;
        },
        (error: unknown) => {
          options.onError?.(error);
          return 0;
        },
      )
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const timer = setInterval(run, options.intervalMs ?? 3_600_000).unref();
  return {
    run,
    async stop() {
      clearInterval(timer);
      await running;
    },
    async [Symbol.asyncDispose]() {
      await this.stop();
    },
  };
}
