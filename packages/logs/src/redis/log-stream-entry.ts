import { z } from 'zod';
import { type DroppedRow, droppedRowSchema } from '../requests/dropped-counts.ts';
import { type LogRecord, logRecordSchema } from '../requests/log-record.ts';

/** The stream's key under a deployment's prefix (`gw:` → `gw:request-logs`). */
export const logStreamKey = (prefix: string): string => `${prefix}request-logs`;

/** Each stream entry holds a batch of records, as a JSON array, in this field. */
const RECORDS_FIELD = 'records';

/** An entry of dropped counts (rows of DroppedRow, as a JSON array) has this field instead. */
const DROPPED_FIELD = 'dropped';

/** An entry of ids an async guardrail rule flagged (a JSON array) has this field instead. */
const FLAGGED_FIELD = 'guardrail-flagged';

/** The field and value of an entry that carries flagged record ids. */
export function encodeFlaggedEntry(ids: readonly string[]): [string, string] {
  return [FLAGGED_FIELD, JSON.stringify(ids)];
}

/** The field and value of an entry that carries dropped counts. */
export function encodeDroppedEntry(rows: readonly DroppedRow[]): [string, string] {
  return [DROPPED_FIELD, JSON.stringify(rows)];
}

/** The field and value of the entry that carries a batch. */
export function encodeEntry(records: readonly LogRecord[]): [string, string] {
  return [RECORDS_FIELD, JSON.stringify(records)];
}

/** An entry as XREADGROUP and XAUTOCLAIM answer it; fields are null once the entry was trimmed away. */
export const streamEntrySchema = z.tuple([z.string(), z.array(z.string()).nullable()]);
export type StreamEntry = z.output<typeof streamEntrySchema>;

/** What an entry holds: its valid records, and why the others (or the whole entry) were refused. */
export interface DecodedEntry {
  records: LogRecord[];
  dropped: DroppedRow[];
  /** Ids of records an async guardrail rule flagged after they were written. */
  flagged: string[];
  errors: Error[];
}

const droppedRowsSchema = z.array(droppedRowSchema).max(10_000);
const flaggedIdsSchema = z.array(z.string().min(1).max(128)).max(10_000);

/** Each record is checked on its own, so one bad record does not cost the batch. */
export function decodeEntry([id, fields]: StreamEntry): DecodedEntry {
  const refused = (reason: string): DecodedEntry => ({
    records: [],
    dropped: [],
    flagged: [],
    errors: [new Error(`log stream entry ${id} ${reason}`)],
  });
  const flaggedIndex = fields?.indexOf(FLAGGED_FIELD) ?? -1;
  if (flaggedIndex >= 0 && flaggedIndex % 2 === 0) {
    try {
      const parsed = flaggedIdsSchema.safeParse(JSON.parse(fields?.[flaggedIndex + 1] ?? ''));
      if (parsed.success) return { records: [], dropped: [], flagged: parsed.data, errors: [] };
      return refused(`holds invalid flagged ids: ${parsed.error.issues[0]?.message}`);
    } catch (error) {
      return refused(`is not JSON: ${(error as Error).message}`);
    }
  }
  const droppedIndex = fields?.indexOf(DROPPED_FIELD) ?? -1;
  if (droppedIndex >= 0 && droppedIndex % 2 === 0) {
    try {
      const parsed = droppedRowsSchema.safeParse(JSON.parse(fields?.[droppedIndex + 1] ?? ''));
      if (parsed.success) return { records: [], dropped: parsed.data, flagged: [], errors: [] };
      return refused(`holds invalid dropped counts: ${parsed.error.issues[0]?.message}`);
    } catch (error) {
      return refused(`is not JSON: ${(error as Error).message}`);
    }
  }
  const index = fields?.indexOf(RECORDS_FIELD) ?? -1;
  const json = index >= 0 && index % 2 === 0 ? fields?.[index + 1] : undefined;
  if (json === undefined) return refused(`has no ${RECORDS_FIELD} field`);
  let values: unknown;
  try {
    values = JSON.parse(json);
  } catch (error) {
    return refused(`is not JSON: ${(error as Error).message}`);
  }
  if (!Array.isArray(values)) return refused('does not hold a list of records');
  const decoded: DecodedEntry = { records: [], dropped: [], flagged: [], errors: [] };
  values.forEach((value, position) => {
    const parsed = logRecordSchema.safeParse(value);
    if (parsed.success) decoded.records.push(parsed.data);
    else {
      const issue = parsed.error.issues[0];
      decoded.errors.push(
        new Error(`log stream entry ${id} record ${position}: ${issue?.path.join('.')}: ${issue?.message}`),
      );
    }
  });
  return decoded;
}
