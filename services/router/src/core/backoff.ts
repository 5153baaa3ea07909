/**
 * Exponential backoff with full jitter: a random wait in [base/2, base] where base doubles per attempt,
 * capped; a provider's Retry-After wins when it asks for longer (capped too).
 */
export function backoffMs(options: {
  attempt: number;
  initialMs: number;
  maxMs: number;
  retryAfterSeconds?: number | undefined;
  random?: () => number;
}): number {
  const random = options.random ?? Math.random;
  const base = Math.min(options.maxMs, options.initialMs * 2 ** options.attempt);
  const jittered = base / 2 + (random() * base) / 2;
  if (options.retryAfterSeconds === undefined) return Math.round(jittered);
  return Math.round(Math.min(options.maxMs, Math.max(jittered, options.retryAfterSeconds * 1000)));
}

/** Resolves after `ms`, or rejects at once when the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
