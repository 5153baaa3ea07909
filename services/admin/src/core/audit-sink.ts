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
  /** Appends one entry; a failure to record is the caller's to report (logged, never a secret in it). */
  record(event: AuditEvent): Promise<void>;
}
