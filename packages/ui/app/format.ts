// Dates in the viewer's time zone, numbers with their units.

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });
const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const money = new Intl.NumberFormat(undefined, {
  style: 'currency',
  currency: 'USD',
  maximumFractionDigits: 6,
});

export function formatTime(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  const date = new Date(typeof value === 'number' ? value : String(value));
  return Number.isNaN(date.getTime()) ? String(value) : dateTime.format(date);
}

export const formatCount = (value: number | undefined | null) =>
  value == null ? '—' : integer.format(value);
export const formatTokens = (value: number | undefined | null) =>
  value == null ? '—' : `${integer.format(value)} tokens`;
export const formatMs = (value: number | undefined | null) =>
  value == null ? '—' : `${integer.format(Math.round(value))} ms`;
export const formatUsd = (value: number | undefined | null) => (value == null ? '—' : money.format(value));
export const formatPercent = (value: number | undefined | null) =>
  value == null ? '—' : `${(value * 100).toFixed(1)} %`;

export function display(value: unknown): string {
  if (value === null || value === undefined || value === '') return '—';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
