/**
 * One entry of the audit log (docs/admin-access.md "Audit log"): a change made through `/api` or SCIM, a
 * login, or a refused access. The sink redacts secrets from `before` and `after` and chains each entry to the
 * one before it by hash; callers hand over what happened as it is.
 */
export interface AuditEvent {
  /** Who: a principal's label (`bootstrap`, `token:<id>`, `session:<user id>`, `scim`, `anonymous`). */
  actor: string;
  /** The role they acted with, when they had one. */
  role?: string | undefined;
  /**
   * What happened: `create`, `update`, `delete` or another verb of a change (`rotate`, `refresh`…),
   * `login`, `logout`, `login_refused`, `access_denied` (a 401 or 403 of `/api` or SCIM).
   */
  action: string;
  /** What it was done to: `METHOD /path` of the request, or a name (`scim:Users/<id>`, `oidc:<email>`). */
  target: string;
  /** The resource before and after the change, when known. */
  before?: unknown;
  after?: unknown;
  /** The HTTP status answered. */
  status: number;
  /** The caller's address. */
  source?: string | undefined;
  requestId: string;
  /** Why, in words (a refusal's message). */
  detail?: string | undefined;
}

export interface AuditSink {
  /** Appends one entry, best effort; a failure to record is the caller's to report (logged, never a secret in it). */
  record(event: AuditEvent): Promise<void>;
}

/**
 * The audit log as the `/api` chain uses it for changes, failing closed (docs/admin-access.md "Audit log"):
 * a change is admitted only while its record can be held, and is answered only once its record is held.
 */
export interface AuditGate extends AuditSink {
  /** Before a change is made: resolves when a record can be held now, else throws 503 `audit_unavailable`. */
  admit(): Promise<void>;
  /**
   * Holds a change's record durably (stored, or queued where the config says so) before its answer is sent;
   * throws 503 `audit_unavailable` when it could not: the record is then kept in this process, written once
   * the audit log answers again, and changes are refused until then.
   */
  hold(event: AuditEvent): Promise<void>;
  /** At shutdown: tries once more to write what is kept in this process; what is still kept is logged as lost. */
  drain(): Promise<void>;
}
