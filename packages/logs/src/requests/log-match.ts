import type { z } from 'zod';
import { type LogFilter, logFilterParamsSchema } from './log-filter.ts';
import type { LogRecord } from './log-record.ts';
import { EQUAL_FIELDS, RANGE_FIELDS } from './log-sql.ts';

const COMPARE: Record<(typeof RANGE_FIELDS)[number][1], (value: number, bound: number) => boolean> = {
  '>=': (value, bound) => value >= bound,
  '<=': (value, bound) => value <= bound,
  '<': (value, bound) => value < bound,
};

/**
 * Whether a record passes a filter, decided in process with the fields and comparisons the stores' SQL uses
 * (the live tail applies `/api/logs`'s filters to records as they are written).
 */
export function matchesLogFilter(record: LogRecord, filter: LogFilter): boolean {
  for (const field of EQUAL_FIELDS) {
    const wanted = filter[field];
    if (wanted !== undefined && record[field] !== wanted) return false;
  }
  for (const [parameter, operator, field] of RANGE_FIELDS) {
    const bound = filter[parameter];
    if (bound !== undefined && !COMPARE[operator](record[field] as number, bound)) return false;
  }
  if (filter.status_class !== undefined) {
    const low = Number(filter.status_class[0]) * 100;
    if (record.status < low || record.status >= low + 100) return false;
  }
  if (filter.routing_rule !== undefined) {
    const rule = record.routing?.rule;
    if (rule?.id !== filter.routing_rule && rule?.name !== filter.routing_rule) return false;
  }
  if (filter.q !== undefined) {
    const text = filter.q.toLowerCase();
    const contains = (content: string | null) => content?.toLowerCase().includes(text) ?? false;
    if (!contains(record.request_content) && !contains(record.response_content)) return false;
  }
  return true;
}

/** `GET /api/logs/stream?…`: the filter parameters of `/api/logs` (no sort or page: records come as written). */
export const logTailParamsSchema: z.ZodType<LogFilter> = logFilterParamsSchema;
