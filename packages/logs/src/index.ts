export {
  AuditChainCheck,
  type AuditVerification,
  auditHash,
  GENESIS_HASH,
} from './audit-chain.ts';
export { auditFilterParamsSchema, auditQueryParamsSchema } from './audit-filter.ts';
export {
  AUDIT_TEXT_LIMITS,
  type AuditEventInput,
  type AuditRecord,
  auditEventSchema,
  MAX_AUDIT_STATE_CHARACTERS,
} from './audit-record.ts';
export { type AuditStore, auditRecords } from './audit-store.ts';
export { DroppedTally, droppedQuerySchema } from './dropped-counts.ts';
export { type LogQueryInput, logQueryParamsSchema, logStatsParamsSchema } from './log-filter.ts';
export { logTailParamsSchema, matchesLogFilter } from './log-match.ts';
export {
  type LogRecord,
  type LogRecordInput,
  logRecordSchema,
  MAX_ERROR_TEXT,
  MAX_NAME,
} from './log-record.ts';
export { startLogRetention } from './log-retention.ts';
export type { LogStatsBucket, LogStore } from './log-store.ts';
export { type LogTail, LogTailHub } from './log-tail.ts';
export { type LogSink, LogWriter } from './log-writer.ts';
