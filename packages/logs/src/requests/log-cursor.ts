import { z } from 'zod';

/** The fields a page of records can be sorted by. */
export const LOG_SORT_FIELDS = ['time', 'latency_ms', 'cost'] as const;
export type LogSortField = (typeof LOG_SORT_FIELDS)[number];
export type SortOrder = 'asc' | 'desc';

/**
 * Where the last page ended: the sort value and id of its last record. The next page starts strictly after
 * that pair (keyset pagination), so records inserted meanwhile never shift a page the way OFFSET would.
 */
export interface LogCursor {
  sort: LogSortField;
  order: SortOrder;
  value: number;
  id: string;
}

const cursorSchema = z.tuple([z.enum(LOG_SORT_FIELDS), z.enum(['asc', 'desc']), z.number(), z.string()]);

/** Opaque to callers: base64url of a small JSON array. */
export function encodeCursor(cursor: LogCursor): string {
  return Buffer.from(JSON.stringify([cursor.sort, cursor.order, cursor.value, cursor.id])).toString(
    'base64url',
  );
}

/** The cursor a string holds, or undefined when it is not one this package wrote. */
export function decodeCursor(text: string): LogCursor | undefined {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  const parsed = cursorSchema.safeParse(value);
  if (!parsed.success) return undefined;
  const [sort, order, sortValue, id] = parsed.data;
  return { sort, order, value: sortValue, id };
}
