import { z } from 'zod';

/**
 * The longest texts an audit record keeps; a sink clips to them (a path or a refusal's message can be long).
 * `before` and `after` are at most MAX_AUDIT_STATE_CHARACTERS of JSON each.
 */
export const AUDIT_TEXT_LIMITS = {
  actor: 256,
  role: 128,
  action: 64,
  target: 2048,
  source: 128,
  request_id: 128,
  detail: 2048,
} as const;

/** The longest JSON text of `before` or `after` (UTF-16 characters); a sink replaces a larger one by a note. */
export const MAX_AUDIT_STATE_CHARACTERS = 65_536;

/**
 * PostgreSQL text refuses NUL: it becomes U+FFFD in every text field, in both stores, before the record is
 * sealed, so the hash covers what is stored. (Inside before and after, JSON text escapes it as \u0000.)
 */
const withoutNul = (value: string) =>
  value.includes('\u0000') ? value.replaceAll('\u0000', '\uFFFD') : value;

const text = (field: keyof typeof AUDIT_TEXT_LIMITS) =>
  z.string().min(1).max(AUDIT_TEXT_LIMITS[field]).transform(withoutNul);

/** A resource as it was before or after a change: any JSON value, null when unknown or absent. */
const state = z
  .json()
  .nullable()
  .default(null)
  .refine((value) => value === null || JSON.stringify(value).length <= MAX_AUDIT_STATE_CHARACTERS, {
    message: `is more than ${MAX_AUDIT_STATE_CHARACTERS} characters of JSON`,
  });

const eventShape = {
  /** Who: the principal's label (`bootstrap`, `token:<id>`, `session:<user id>`, `scim`, `anonymous`). */
  actor: text('actor'),
  /** The role they acted with; null when none was known (a 401). */
  role: text('role').nullable().default(null),
  /** What: `create`, `update`, `delete`, a sub-action's verb (`rotate`), `login`, `access_denied`… */
  action: z
    .string()
    .min(1)
    .max(AUDIT_TEXT_LIMITS.action)
    .regex(/^[a-z][a-z0-9_]*$/, 'is not a lowercase word (letters, digits, _)'),
  /** To what: `METHOD /path` of the request, or a name (`scim:Users/<id>`). */
  target: text('target'),
  /** The HTTP status answered. */
  status: z.number().int().min(100).max(599),
  /** The caller's address (the connection's peer); null when unknown. */
  source: text('source').nullable().default(null),
  /** The request's id (`x-request-id` of the answer). */
  request_id: text('request_id'),
  /** Why, in words (a refusal's or a failure's message). */
  detail: z.string().max(AUDIT_TEXT_LIMITS.detail).transform(withoutNul).nullable().default(null),
  /** The resource before the change, secrets redacted. */
  before: state,
  /** The resource after the change, secrets redacted. */
  after: state,
};

/** What a sink appends; the store adds seq, time and the hashes. */
export const auditEventSchema = z.strictObject(eventShape);
export type AuditEvent = z.output<typeof auditEventSchema>;
/** An event as a caller builds it: role, source, detail, before and after may be left out. */
export type AuditEventInput = z.input<typeof auditEventSchema>;

const sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'is not a SHA-256 in lowercase hex');

/**
 * One record of the audit log, as `/api/audit-logs` and the export answer it (docs/admin-access.md "Audit
 * log"): the event, its place in the chain (`seq`, from 1 without gaps), when it was stored, and the hashes
 * that chain it to the record before.
 */
export const auditRecordSchema = z.strictObject({
  seq: z.number().int().min(1),
  /** When it was stored, epoch ms; never earlier than the record before. */
  time: z.number().int().nonnegative(),
  ...eventShape,
  /** The hash of the record before (64 zeros for the first). */
  prev_hash: sha256Hex,
  /** SHA-256 of the record's canonical form (audit-chain.ts), lowercase hex. */
  hash: sha256Hex,
});
export type AuditRecord = z.output<typeof auditRecordSchema>;

/** The column names, in the API's order, for the stores' SQL. */
export const AUDIT_RECORD_FIELDS = Object.keys(auditRecordSchema.shape) as Array<keyof AuditRecord>;
