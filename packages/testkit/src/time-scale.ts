import { availableParallelism, loadavg } from 'node:os';

/** The most a measured load stretches a ceiling: past it a stuck test would take too long to say so. */
const MOST_MEASURED = 10;

/**
 * How many times longer than on an idle machine anything may take here: the machine's load per core (its
 * 1-minute average, the suite's own processes included; at most 10), and at least GW_TEST_TIME_SCALE (1 by
 * default; CI sets it where the load is known to come before the average shows it). A ceiling is multiplied by
 * it, never a pause and never a bound that proves something did not happen: on a busy machine everything
 * takes longer, and a wait for a condition ends when it comes true, not at its ceiling.
 */
export function timeScale(): number {
  const floor = Number(process.env['GW_TEST_TIME_SCALE'] || 1);
  if (!Number.isFinite(floor) || floor <= 0) {
    throw new Error(`GW_TEST_TIME_SCALE: '${process.env['GW_TEST_TIME_SCALE']}' is not a positive number`);
  }
  const measured = Math.min(MOST_MEASURED, loadavg()[0]! / availableParallelism());
  return Math.max(1, floor, measured);
}

/**
 * A ceiling of `ms` on an idle machine, stretched by timeScale(): for start-up and request timeouts, kill
 * timers, waitFor and a test's own timeout (`it(name, fn, scaled(60_000))`).
 */
export function scaled(ms: number): number {
  return Math.ceil(ms * timeScale());
}
