import {
  AUDIT_TEXT_LIMITS,
  type AuditEventInput,
  type AuditStore,
  MAX_AUDIT_STATE_CHARACTERS,
} from '@gw/logs';
import { type Logger, redactText } from '@gw/shared';
import type { AuditEvent, AuditSink } from './audit-sink.ts';
import { redactForViewer } from './viewer-redaction.ts';

export interface AuditStoreSinkOptions {
  store: AuditStore;
  logger: Logger;
  /** Told of each event that could not be stored (a metric's counter); it is logged too. */
  onFailure?: (() => void) | undefined;
}

/**
 * A resource as the audit log keeps it: plain JSON (what JSON.stringify makes of it), then redacted as a Viewer
 * sees answers (`redactForViewer`: every credential field `[redacted]`, anything shaped like a key too), so a
 * record holds no secret and reads the same for every role. One larger than the store keeps becomes a note.
 */
function auditState(value: unknown): AuditEventInput['before'] {
  if (value === undefined) return null;
  let json: string | undefined;
  try {
    json = JSON.stringify(redactForViewer(JSON.parse(JSON.stringify(value) ?? 'null')));
  } catch (error) {
    return { omitted: `not JSON: ${(error as Error).message}`.slice(0, 200) };
  }
  if (json === undefined) return null;
  if (json.length > MAX_AUDIT_STATE_CHARACTERS) {
    return { omitted: `more than ${MAX_AUDIT_STATE_CHARACTERS} characters of JSON`, characters: json.length };
  }
  return JSON.parse(json) as AuditEventInput['before'];
}

const clip = (value: string, limit: number) => (value.length > limit ? value.slice(0, limit) : value);
const text = (value: string | undefined, field: keyof typeof AUDIT_TEXT_LIMITS) =>
  value === undefined || value === '' ? null : clip(value, AUDIT_TEXT_LIMITS[field]);

/** An event as the store takes it: texts clipped to the store's limits, keys taken out of texts, states redacted. */
export function toAuditEntry(event: AuditEvent): AuditEventInput {
  return {
    actor: clip(event.actor || 'anonymous', AUDIT_TEXT_LIMITS.actor),
    role: text(event.role, 'role'),
    action: event.action,
    target: clip(redactText(event.target), AUDIT_TEXT_LIMITS.target),
    status: event.status,
    source: text(event.source, 'source'),
    request_id: clip(event.requestId, AUDIT_TEXT_LIMITS.request_id),
    detail: text(event.detail === undefined ? undefined : redactText(event.detail), 'detail'),
    before: auditState(event.before),
    after: auditState(event.after),
  };
}

/**
 * The audit sink of the admin API, SSO and SCIM over an AuditStore. It never throws to its caller: an event
 * that cannot be stored (the database down, an event the store refuses) is logged with logger.error and
 * counted through `onFailure`, and the request it records is not affected.
 */
export function createAuditStoreSink(options: AuditStoreSinkOptions): AuditSink {
  return {
    async record(event: AuditEvent): Promise<void> {
      try {
        await options.store.append(toAuditEntry(event));
      } catch (error) {
        options.logger.error(
          { err: error, requestId: event.requestId, action: event.action, target: redactText(event.target) },
          'audit: a record could not be stored',
        );
        options.onFailure?.();
      }
    },
  };
}
