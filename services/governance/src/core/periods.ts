/** Reset durations (`1d`, `1M`, `1Q`…) to concrete periods in UTC. */

export interface Period {
  startMs: number;
  endMs: number;
}

const FIXED_MS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const MONTHS: Record<string, number> = { M: 1, Q: 3, Y: 12 };

export function parseDuration(duration: string): { count: number; unit: string } {
  const match = /^([1-9][0-9]{0,3})([mhdwMQY])$/.exec(duration);
  if (!match) throw new RangeError(`'${duration}' is not a duration such as 1m, 1h, 1d, 1w, 1M, 1Q or 1Y`);
  return { count: Number(match[1]), unit: match[2]! };
}

/** Length of a fixed duration in ms (rate-limit windows); months have none. */
export function fixedDurationMs(duration: string): number {
  const { count, unit } = parseDuration(duration);
  const unitMs = FIXED_MS[unit];
  if (unitMs === undefined) throw new RangeError(`'${duration}' has no fixed length`);
  return count * unitMs;
}

function monthStart(year: number, month: number): number {
  return Date.UTC(year, month, 1);
}

/**
 * The period containing `nowMs`. Calendar-aligned periods start on UTC boundaries (midnight, Monday, the 1st
 * of a month, quarter or year); the others repeat from `anchorMs` (when the budget was created).
 */
export function periodAt(options: {
  duration: string;
  nowMs: number;
  calendarAligned: boolean;
  anchorMs: number;
}): Period {
  const { count, unit } = parseDuration(options.duration);
  const months = MONTHS[unit];
  if (months === undefined) {
    const length = count * FIXED_MS[unit]!;
    // Epoch day 0 was a Thursday: weeks aligned to Monday start 3 days later.
    const origin = options.calendarAligned ? (unit === 'w' ? 4 * 86_400_000 : 0) : options.anchorMs;
    const start = origin + Math.floor((options.nowMs - origin) / length) * length;
    return { startMs: start, endMs: start + length };
  }
  const span = count * months;
  const now = new Date(options.nowMs);
  const anchor = new Date(options.anchorMs);
  const originMonth = options.calendarAligned ? 0 : anchor.getUTCFullYear() * 12 + anchor.getUTCMonth();
  const nowMonth = now.getUTCFullYear() * 12 + now.getUTCMonth();
  let startMonth = originMonth + Math.floor((nowMonth - originMonth) / span) * span;
  const originDay = options.calendarAligned
    ? 0
    : anchor.getTime() - monthStart(anchor.getUTCFullYear(), anchor.getUTCMonth());
  const startOf = (month: number) => monthStart(Math.floor(month / 12), month % 12) + originDay;
  if (startOf(startMonth) > options.nowMs) startMonth -= span;
  return { startMs: startOf(startMonth), endMs: startOf(startMonth + span) };
}
