import { describe, expect, it } from 'vitest';
import { fixedDurationMs, parseDuration, periodAt } from './periods.ts';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

describe('periods', () => {
  it('parses every unit and rejects the rest', () => {
    expect(parseDuration('30d')).toEqual({ count: 30, unit: 'd' });
    expect(() => parseDuration('1x')).toThrow(RangeError);
    expect(fixedDurationMs('1h')).toBe(3_600_000);
    expect(() => fixedDurationMs('1M')).toThrow(RangeError);
  });

  it.each([
    ['1d', '2026-11-22T13:45:00Z', '2026-11-22T00:00:00.000Z', '2026-11-23T00:00:00.000Z'],
    ['1w', '2026-11-22T13:45:00Z', '2026-11-16T00:00:00.000Z', '2026-11-23T00:00:00.000Z'],
    ['1M', '2026-11-22T13:45:00Z', '2026-11-01T00:00:00.000Z', '2026-12-01T00:00:00.000Z'],
    ['1Q', '2026-11-22T13:45:00Z', '2026-10-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
    ['1Y', '2026-11-22T13:45:00Z', '2026-01-01T00:00:00.000Z', '2027-01-01T00:00:00.000Z'],
  ])('aligns %s to UTC calendar boundaries', (duration, now, start, end) => {
    const period = periodAt({
      duration,
      nowMs: at(now),
      calendarAligned: true,
      anchorMs: at('2026-03-10T08:00:00Z'),
    });
    expect([iso(period.startMs), iso(period.endMs)]).toEqual([start, end]);
  });

  it('repeats unaligned periods from the anchor', () => {
    const anchorMs = at('2026-03-10T08:00:00Z');
    const day = periodAt({
      duration: '1d',
      nowMs: at('2026-11-22T07:00:00Z'),
      calendarAligned: false,
      anchorMs,
    });
    expect([iso(day.startMs), iso(day.endMs)]).toEqual([
      '2026-11-21T08:00:00.000Z',
      '2026-11-22T08:00:00.000Z',
    ]);
    const month = periodAt({
      duration: '1M',
      nowMs: at('2026-11-22T07:00:00Z'),
      calendarAligned: false,
      anchorMs,
    });
    expect([iso(month.startMs), iso(month.endMs)]).toEqual([
      '2026-11-10T08:00:00.000Z',
      '2026-12-10T08:00:00.000Z',
    ]);
    const early = periodAt({
      duration: '1M',
      nowMs: at('2026-11-05T00:00:00Z'),
      calendarAligned: false,
      anchorMs,
    });
    expect(iso(early.startMs)).toBe('2026-10-10T08:00:00.000Z');
  });
});
