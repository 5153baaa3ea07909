import { z } from 'zod';
import { fromQueryParams } from '../requests/log-filter.ts';
import { AUDIT_TEXT_LIMITS } from './audit-record.ts';

const epochMs = z.number().int().nonnegative();
const value = (field: keyof typeof AUDIT_TEXT_LIMITS) => z.string().min(1).max(AUDIT_TEXT_LIMITS[field]);

const filterShape = {
  /** Records stored at or after this time (epoch ms). */
  from: epochMs.optional(),
  /** Records stored before this time (epoch ms, exclusive). */
  to: epochMs.optional(),
  actor: value('actor').optional(),
  role: value('role').optional(),
  action: value('action').optional(),
  /** Records whose target starts with this text (case-sensitive): `DELETE /api/providers`, `POST /api/gov`. */
  target_prefix: value('target').optional(),
  status: z.number().int().min(100).max(599).optional(),
  request_id: value('request_id').optional(),
};

function checkRange(
  filter: { from?: number | undefined; to?: number | undefined },
  context: z.RefinementCtx,
) {
  if (filter.from !== undefined && filter.to !== undefined && filter.to < filter.from) {
    context.addIssue({ code: 'custom', path: ['to'], message: 'must not be below from' });
  }
}

/** Which records a query or an export covers; every field narrows, all of them together. */
export const auditFilterSchema = z.strictObject(filterShape).superRefine(checkRange);
export type AuditFilter = z.output<typeof auditFilterSchema>;
export type AuditFilterInput = z.input<typeof auditFilterSchema>;

/** The largest seq a cursor can name (PostgreSQL's bigint is wider; JavaScript numbers are exact to here). */
const MAX_SEQ = Number.MAX_SAFE_INTEGER;

/** A page of records: the filter, the order of seq, a page size and where the previous page ended. */
export const auditQuerySchema = z
  .strictObject({
    ...filterShape,
    /** By seq (the chain's order, which is also time order): newest first by default. */
    order: z.enum(['asc', 'desc']).default('desc'),
    limit: z.number().int().min(1).max(1000).default(100),
    /** `next_cursor` of the previous page (the seq it ended at), with the same order. */
    cursor: z
      .string()
      .regex(/^[1-9]\d{0,15}$/, 'is not a cursor this API gave out')
      .refine((seq) => Number(seq) <= MAX_SEQ, 'is not a cursor this API gave out')
      .optional(),
  })
  .superRefine(checkRange);
export type AuditQuery = z.output<typeof auditQuerySchema>;
export type AuditQueryInput = z.input<typeof auditQuerySchema>;

/** `GET /api/audit-logs?…`: the query's parameters as `URLSearchParams` give them (400 naming a bad one). */
export const auditQueryParamsSchema = z.preprocess(fromQueryParams, auditQuerySchema);

/** `GET /api/audit-logs/export?…`: the filter's parameters alone (an export is the whole range, by seq). */
export const auditFilterParamsSchema = z.preprocess(fromQueryParams, auditFilterSchema);
