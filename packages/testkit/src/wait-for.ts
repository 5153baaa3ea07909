import { setTimeout as sleep } from 'node:timers/promises';

export interface WaitForOptions {
  /** How long the condition has to come true (default 5 s). */
  timeoutMs?: number;
  /** How often it is checked (default 50 ms). */
  intervalMs?: number;
  /** Names the condition in the timeout error. */
  what?: string;
}

/**
 * Waits on a condition instead of a fixed pause: checks `condition` until it returns a value other than
 * undefined or false and resolves with that value, or fails after `timeoutMs` with the last error the
 * check threw. A check that throws counts as "not yet" (a server still starting refuses connections).
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<Exclude<T, undefined | false>> {
  const deadline = Date.now() + (options.timeoutMs ?? 5_000);
  let last: unknown;
  while (true) {
    try {
      const value = await condition();
      if (value !== undefined && value !== false) return value as Exclude<T, undefined | false>;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const reason = last instanceof Error ? `: ${last.message}` : '';
      throw new Error(`timed out waiting for ${options.what ?? 'a condition'}${reason}`);
    }
    await sleep(options.intervalMs ?? 50);
  }
}
