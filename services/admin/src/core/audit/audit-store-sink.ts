import {
  AUDIT_TEXT_LIMITS,
  type AuditEventInput,
  type AuditStore,
  auditEventSchema,
  MAX_AUDIT_STATE_CHARACTERS,
} from '@gw/logs';
import { GatewayError, type Logger, redactText, throttledLog } from '@gw/shared';
import { redactForViewer } from '../access/viewer-redaction.ts';
import type { AuditEvent, AuditGate } from './audit-sink.ts';

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

/** Where a record is held before its change is answered: the store itself, or a durable queue in front of it. */
export interface AuditHolder {
  /** What holds records, as a refusal names it (`the audit store`, `the audit queue in Redis`). */
  readonly what: string;
  /** Holds one entry durably; rejects when it could not. */
  append(entry: AuditEventInput): Promise<void>;
  /** Resolves when an append could be made now. */
  ping(): Promise<void>;
}

/** `audit.on_store_failure: refuse`: records are appended to the store itself. */
export function storeHolder(store: AuditStore): AuditHolder {
  return {
    what: 'the audit store',
    append: async (entry) => {
      await store.append(entry);
    },
    ping: () => store.ping(),
  };
}

export interface AuditStoreSinkOptions {
  holder: AuditHolder;
  logger: Logger;
  /** Told of each event that could not be held, and of each lost (a metric's counter); it is logged too. */
  onFailure?: (() => void) | undefined;
  /** Records this process keeps while the holder fails, oldest first; more are lost (logged, counted). 10,000. */
  maxKept?: number | undefined;
  /** How often kept records are tried again while nothing else writes. 1 s by default. */
  retryMs?: number | undefined;
}

const unavailable = (message: string) =>
  new GatewayError({ type: 'service_unavailable', code: 'audit_unavailable', message });

/**
 * An event as the holder takes it, validated here: a record the store would refuse is never kept (it would
 * stop every record after it).
 */
function heldEntry(event: AuditEvent): AuditEventInput | Error {
  try {
    return auditEventSchema.parse(toAuditEntry(event));
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

const reason = (error: unknown) =>
  redactText(error instanceof Error ? error.message || error.name : String(error)).slice(0, 300);

/**
 * The audit log of the admin API, SSO and SCIM, failing closed (docs/admin-access.md "Audit log"). Writes go
 * one at a time in this process, in order. A record that cannot be held is kept here (up to maxKept) and
 * written before anything newer, so the chain stays in the order things happened; while any is kept, `admit`
 * refuses changes. `record` (refusals, logins, SCIM) never throws: what it cannot hold is kept the same way.
 */
export function createAuditStoreSink(options: AuditStoreSinkOptions): AuditGate {
  const { holder, logger } = options;
  const maxKept = options.maxKept ?? 10_000;
  const kept: AuditEventInput[] = [];
  let lost = 0;
  let checking: Promise<unknown> | undefined;
  const lostLine = throttledLog(logger, 'error');
  let tail: Promise<unknown> = Promise.resolve();
  let retry: NodeJS.Timeout | undefined;
  /** Runs writes one after another: the chain's order is the order they were asked for. */
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = tail.then(work, work);
    tail = run.catch(() => {});
    return run;
  };
  /** Writes what is kept, oldest first; answers the failure that stopped it, or undefined when all is written. */
  async function flush(): Promise<unknown> {
    while (kept.length > 0) {
      try {
        await holder.append(kept[0]!);
      } catch (error) {
        return error ?? new Error('the append failed');
      }
      kept.shift();
    }
    if (retry) clearInterval(retry);
    retry = undefined;
    return undefined;
  }
  function keep(entry: AuditEventInput, error: unknown): void {
    options.onFailure?.();
    if (kept.length >= maxKept) {
      lost += 1;
      lostLine(
        'lost',
        { err: error, lost, action: entry.action, target: entry.target },
        `audit: a record was lost: ${maxKept} are kept in this process already while ${holder.what} fails`,
      );
      return;
    }
    if (kept.length === 0)
      logger.error(
        { err: error, requestId: entry.request_id, action: entry.action, target: entry.target },
        `audit: a record could not be stored; records are kept in this process and changes refused until ${holder.what} answers`,
      );
    kept.push(entry);
    retry ??= setInterval(() => {
      void serial(flush).then((failure) => {
        if (failure === undefined)
          logger.warn(`audit: ${holder.what} answers again; the kept records are written`);
      });
    }, options.retryMs ?? 1_000).unref();
  }
  /** Writes an entry after what is kept; answers the failure when it is kept instead. */
  const write = (entry: AuditEventInput, onFailure: (error: unknown) => AuditEventInput = () => entry) =>
    serial(async () => {
      const failure = await flush();
      if (failure === undefined) {
        try {
          await holder.append(entry);
          return undefined;
        } catch (error) {
          keep(onFailure(error), error);
          return error ?? new Error('the append failed');
        }
      }
      keep(onFailure(failure), failure);
      return failure;
    });

  return {
    async record(event: AuditEvent): Promise<void> {
      const entry = heldEntry(event);
      if (entry instanceof Error) {
        logger.error({ err: entry, action: event.action }, 'audit: an event could not be made a record');
        options.onFailure?.();
        return;
      }
      await write(entry);
    },

    async admit(): Promise<void> {
      // Changes that arrive while a check is under way share it: a store that takes seconds to fail (a locked
      // file, a connect timeout) does not make each of them wait as long again, one after another.
      checking ??= serial(async () => {
        const stuck = await flush();
        if (stuck !== undefined) return stuck;
        try {
          await holder.ping();
          return undefined;
        } catch (error) {
          return error ?? new Error('no answer');
        }
      }).finally(() => {
        checking = undefined;
      });
      const failure = await checking;
      if (failure === undefined) return;
      throw unavailable(
        `the audit log cannot record changes now (${holder.what}: ${reason(failure)}): this change was not made; changes are refused until it answers again`,
      );
    },

    async hold(event: AuditEvent): Promise<void> {
      const entry = heldEntry(event);
      if (entry instanceof Error) {
        logger.error({ err: entry, action: event.action }, 'audit: an event could not be made a record');
        options.onFailure?.();
        throw new GatewayError({
          type: 'internal_error',
          code: 'audit_invalid',
          message: `the change was made, but its audit record is not valid (${reason(entry)})`,
        });
      }
      const failure = await write(entry, (error) => ({
        // Kept, it tells what the caller was answered: the change was made, the answer was this 503.
        ...entry,
        status: 503,
        detail:
          `answered 503: the change was made (status ${entry.status}), and its record could not be stored then (${reason(error)})`.slice(
            0,
            AUDIT_TEXT_LIMITS.detail,
          ),
      }));
      if (failure === undefined) return;
      throw unavailable(
        `the change was made, but its audit record could not be stored (${holder.what}: ${reason(failure)}): this admin keeps it and writes it once the audit log answers; changes are refused until then`,
      );
    },

    async drain(): Promise<void> {
      await serial(flush);
      if (retry) clearInterval(retry);
      retry = undefined;
      if (kept.length > 0)
        logger.error(
          { count: kept.length },
          `audit: ${kept.length} records kept in this process are lost at shutdown (${holder.what} did not answer)`,
        );
    },
  };
}
