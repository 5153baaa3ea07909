import { setTimeout as sleep } from 'node:timers/promises';
import { timeScale } from './time-scale.ts';

export interface WaitForOptions {
  /** How long the condition has to come true on an idle machine (default 5 s); stretched by timeScale(). */
  timeoutMs?: number;
  /** How often it is checked (default 50 ms). */
  intervalMs?: number;
  /** Names the condition in the timeout error. */
  what?: string;
}

/**
 * Waits on a condition instead of a fixed pause: checks `condition` until it returns a value other than
 * undefined or false and resolves with that value, or fails after `timeoutMs` (times the time scale, the
 * highest seen while it waits) with the last error the check threw. A check that throws counts as "not yet"
 * (a server still starting refuses connections).
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  options: WaitForOptions = {},
): Promise<Exclude<T, undefined | false>> {
  const started = Date.now();
  const timeoutMs = options.timeoutMs ?? 5_000;
  let scale = timeScale();
  let last: unknown;
  while (true) {
    try {
      const value = await condition();
      if (value !== undefined && value !== false) return value as Exclude<T, undefined | false>;
    } catch (error) {
      last = error;
    }
    // A machine that got busier while this waited gives it longer still.
    scale = Math.max(scale, timeScale());
    if (Date.now() - started > timeoutMs * scale) {
      const reason = last instanceof Error ? `: ${last.message}` : '';
      throw new Error(
        `timed out waiting for ${options.what ?? 'a condition'} (${Date.now() - started} ms, time scale ${scale.toFixed(1)})${reason}`,
      );
    }
    await sleep(options.intervalMs ?? 50);
  }
}

/**
 * A negative check's pause: time for something that must NOT happen (a second charge, an alert sent twice, a
 * state flipping back) to show, where no event can say it did not. Not stretched by the time scale: on a busy
 * machine the check is weaker, never wrong. Keep it short, and say at the call what it gives time to.
 */
export function pauseForNegativeCheck(ms: number): Promise<void> {
  return sleep(ms).then(() => undefined);
}

/** Waits until the clock has passed `epochMs`: for a test of time itself (an expiry, a TTL), not of an event. */
export async function untilClockPasses(epochMs: number): Promise<void> {
  while (Date.now() <= epochMs) await sleep(epochMs - Date.now() + 1);
}
