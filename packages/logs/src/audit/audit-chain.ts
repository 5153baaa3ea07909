import { createHash } from 'node:crypto';
import { type AuditEvent, type AuditRecord, auditRecordSchema } from './audit-record.ts';

/** The `prev_hash` of the first record. */
export const GENESIS_HASH = '0'.repeat(64);

/**
 * JSON in the canonical form of RFC 8785 (JCS) for the values a record holds: object members sorted by name
 * (UTF-16 code units, JavaScript's default order), no whitespace, strings and numbers as JSON.stringify writes
 * them. Python's `json.dumps(value, sort_keys=True, separators=(',', ':'), ensure_ascii=False)` writes the
 * same text for every record gw stores (integers, and names without characters outside the BMP).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const members = Object.entries(value)
    .filter(([, item]) => item !== undefined)
    .sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0))
    .map(([name, item]) => `${JSON.stringify(name)}:${canonicalJson(item)}`);
  return `{${members.join(',')}}`;
}

/**
 * A record's hash: SHA-256, lowercase hex, of the UTF-8 bytes of the canonical JSON of every field of the
 * record but `hash` itself (`seq`, `time`, the event's fields with null for what is absent, and `prev_hash`).
 */
export function auditHash(record: Omit<AuditRecord, 'hash'> & { hash?: string }): string {
  const { hash: _, ...fields } = record;
  return createHash('sha256').update(canonicalJson(fields), 'utf8').digest('hex');
}

/** The record an event becomes at its place in the chain. */
export function sealAuditRecord(
  event: AuditEvent,
  place: { seq: number; time: number; prevHash: string },
): AuditRecord {
  const record = { seq: place.seq, time: place.time, ...event, prev_hash: place.prevHash };
  return { ...record, hash: auditHash(record) };
}

/**
 * Why a chain check stopped: a record whose fields no longer give its hash (`edited`), a seq skipped
 * (`missing`: a record deleted), a record whose prev_hash is not the hash of the one before it (`unlinked`:
 * records reordered, replaced or removed and renumbered), a seq that does not follow the one before in a file
 * (`out_of_order`), or a record that cannot be read as one (`malformed`).
 */
export type AuditBreak = 'edited' | 'missing' | 'unlinked' | 'out_of_order' | 'malformed';

/** The answer of a chain check (`verify()`, `GET /api/audit-logs/verify`, `pnpm audit:verify`). */
export type AuditVerification =
  | {
      ok: true;
      /** Records checked, from seq 1. */
      records: number;
      /** The last record's hash (64 zeros when there is none): note it to detect a later truncation. */
      head: string;
    }
  | {
      ok: false;
      /** The first record that is broken (for `missing`, the seq that is not there). */
      seq: number;
      reason: AuditBreak;
      message: string;
      /** Records that checked out before it. */
      records: number;
    };

/**
 * Checks records in chain order, one at a time (a backend reads them in pages, a file line by line): each
 * must have the next seq, point at the hash of the one before, and hash to its own `hash`.
 */
export class AuditChainCheck {
  #expected = 1;
  #previous = GENESIS_HASH;

  /** Checks the next record; answers the break it shows, or undefined. */
  next(record: AuditRecord): Extract<AuditVerification, { ok: false }> | undefined {
    const seq = record.seq;
    if (seq < this.#expected) {
      return this.#broken(seq, 'out_of_order', `record ${seq} comes after record ${this.#expected - 1}`);
    }
    if (seq > this.#expected) {
      const next = seq === this.#expected + 1 ? `${seq}` : `${seq} (${seq - this.#expected} records missing)`;
      return this.#broken(
        this.#expected,
        'missing',
        `record ${this.#expected} is missing: the next record is ${next}`,
      );
    }
    if (record.prev_hash !== this.#previous) {
      const before = seq === 1 ? 'the start of the chain (64 zeros)' : `the hash of record ${seq - 1}`;
      return this.#broken(
        seq,
        'unlinked',
        `record ${seq}'s prev_hash is not ${before}: records before it were reordered, replaced or removed`,
      );
    }
    if (auditHash(record) !== record.hash) {
      return this.#broken(
        seq,
        'edited',
        `record ${seq} does not match its hash: it was changed after it was written`,
      );
    }
    this.#expected = seq + 1;
    this.#previous = record.hash;
    return undefined;
  }

  /** A record that could not be read (bad JSON, a field of the wrong type): its seq when it has one. */
  malformed(seq: number | undefined, why: string): Extract<AuditVerification, { ok: false }> {
    const at = seq ?? this.#expected;
    return this.#broken(at, 'malformed', `record ${at} cannot be read: ${why}`);
  }

  /** Checks a value read from outside (an export's line): malformed unless it is a record. */
  nextValue(value: unknown): Extract<AuditVerification, { ok: false }> | undefined {
    const parsed = auditRecordSchema.safeParse(value);
    if (parsed.success) return this.next(parsed.data);
    const seq = (value as { seq?: unknown } | null)?.seq;
    const issue = parsed.error.issues[0]!;
    return this.malformed(
      typeof seq === 'number' && Number.isInteger(seq) ? seq : undefined,
      `${issue.path.join('.') || 'record'}: ${issue.message}`,
    );
  }

  /** The answer when every record so far checked out. */
  result(): Extract<AuditVerification, { ok: true }> {
    return { ok: true, records: this.#expected - 1, head: this.#previous };
  }

  #broken(seq: number, reason: AuditBreak, message: string): Extract<AuditVerification, { ok: false }> {
    return { ok: false, seq, reason, message, records: this.#expected - 1 };
  }
}
