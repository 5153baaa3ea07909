export {
  AuditChainCheck,
  type AuditVerification,
  auditHash,
  GENESIS_HASH,
} from './audit/audit-chain.ts';
export { auditFilterParamsSchema, auditQueryParamsSchema } from './audit/audit-filter.ts';
export {
  AUDIT_TEXT_LIMITS,
  type AuditEventInput,
  type AuditRecord,
  auditEventSchema,
  MAX_AUDIT_STATE_CHARACTERS,
} from './audit/audit-record.ts';
export { type AuditStore, auditRecords } from './audit/audit-store.ts';
export { DroppedTally, droppedQuerySchema } from './requests/dropped-counts.ts';
export { type LogQueryInput, logQueryParamsSchema, logStatsParamsSchema } from './requests/log-filter.ts';
export { logTailParamsSchema, matchesLogFilter } from './requests/log-match.ts';
export {
  type LogRecord,
  type LogRecordInput,
  logRecordSchema,
  MAX_ERROR_TEXT,
  MAX_NAME,
  ROUTING_LIMITS,
} from './requests/log-record.ts';
export { startLogRetention } from './requests/log-retention.ts';
export type { LogStatsBucket, LogStore } from './requests/log-store.ts';
export { type LogTail, LogTailHub } from './requests/log-tail.ts';
export { type LogSink, LogWriter } from './requests/log-writer.ts';
export {
  type SpendGroup,
  type SpendReport,
  type SpendRow,
  spendParamsSchema,
} from './requests/spend-query.ts';
