import type { GatewayError } from '@gw/shared';
import type { NextFunction, Request, Response } from 'express';
import type { Principal } from '../access/admin-principal.ts';
import type { AuditEvent, AuditGate } from './audit-sink.ts';

/** What the trail learns of a request from the admin chain (admin-express.ts keeps it in response.locals). */
export interface AuditedRequest {
  requestId: string;
  /** The path as sent. */
  path: string;
  /** The path's segments after `/api/`, decoded (set once the path is known). */
  segments?: string[] | undefined;
  principal?: Principal | undefined;
  /** The body a module answered (a create's answer is its `after`). */
  answer?: unknown;
  /** The message of the error answered, when one was. */
  failure?: string | undefined;
  /** Set when the request was recorded as refused, so that it is not recorded twice. */
  refused?: boolean | undefined;
  /**
   * Set for a change: the route's answer calls it with the status and body it is about to answer, and sends
   * them only once it resolves (the record is held); it throws the 503 when the record could not be held.
   */
  hold?: ((status: number, answer: unknown) => Promise<void>) | undefined;
  /** Set once the record was handed to `hold`, so that it is not recorded again when the answer closes. */
  held?: boolean | undefined;
}

/** Methods that change nothing: never recorded, never slowed. */
const READS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** A POST to a path ending in one of these is that verb (a key rotated, secrets refreshed), not a create. */
const SUB_ACTIONS = new Set(['rotate', 'refresh', 'reconnect', 'test']);

/** What a change is called in the log: POST → create (or its sub-action's verb), PUT and PATCH → update, DELETE → delete. */
export function auditAction(method: string, segments: readonly string[]): string {
  if (method === 'POST') {
    const last = segments[segments.length - 1];
    return last !== undefined && segments.length > 1 && SUB_ACTIONS.has(last) ? last : 'create';
  }
  if (method === 'PUT' || method === 'PATCH') return 'update';
  if (method === 'DELETE') return 'delete';
  return method.toLowerCase().replace(/[^a-z]/g, '') || 'change';
}

/** `METHOD /api/…` with the path in its canonical form (the form the router matched), else as sent. */
function targetOf(method: string, request: AuditedRequest): string {
  const path = request.segments ? `/api/${request.segments.map(encodeURIComponent).join('/')}` : request.path;
  return `${method} ${path}`;
}

export interface AuditTrailOptions {
  sink: AuditGate;
  /**
   * A change's resource as a GET of its path answers it (200 only, else undefined): read before the change and
   * after it.
   */
  read: (principal: Principal, segments: string[], path: string) => Promise<unknown>;
  /** The request's context as the admin chain keeps it. */
  context: (response: Response) => AuditedRequest;
}

/**
 * The audit log's view of the `/api` chain (docs/admin-access.md "Audit log"). `changes` is a middleware placed
 * after authorization: a request that is not a read is admitted only while the audit log can hold a record
 * (else 503 before anything is changed), has its resource read before the change (a GET of the same path,
 * when that answers 200), and its answer is sent only once its record is held, with
 * the resource read again (or, for a create, the answer's body). A change that fails (an error answer) is
 * recorded after its answer. `failed` is called by the error handler and records a 401 or 403 of `/api` as
 * `access_denied`. Reads are never recorded and never wait.
 */
export type AuditTrail = ReturnType<typeof createAuditTrail>;

export function createAuditTrail(options: AuditTrailOptions) {
  const pending = new Set<Promise<void>>();
  const track = (work: Promise<void>) => {
    pending.add(work);
    void work.finally(() => pending.delete(work));
  };

  const { read } = options;

  async function changes(request: Request, response: Response, next: NextFunction): Promise<void> {
    if (READS.has(request.method)) return next();
    const context = options.context(response);
    const principal = context.principal!;
    const segments = context.segments!;
    const action = auditAction(request.method, segments);
    // Nothing is changed while its record could not be held (audit fails closed).
    await options.sink.admit();
    // A create's path is its collection: its GET is a list, not the resource.
    const readable = action !== 'create';
    const before = readable ? await read(principal, segments, context.path) : undefined;
    const source = request.socket.remoteAddress;
    const event = async (
      status: number,
      answer: unknown,
      detail: string | undefined,
    ): Promise<AuditEvent> => {
      const reread = readable ? await read(principal, segments, context.path) : undefined;
      return {
        actor: principal.label,
        role: principal.roleId,
        action,
        target: targetOf(request.method, context),
        before,
        after: reread ?? (action === 'update' || action === 'delete' ? undefined : answer),
        status,
        source,
        requestId: context.requestId,
        detail,
      };
    };
    context.hold = async (status, answer) => {
      context.held = true;
      await options.sink.hold(await event(status, answer, undefined));
    };
    response.once('close', () => {
      if (context.refused || context.held) return;
      const finished = response.writableFinished;
      track(
        (async () => {
          // 499: the caller went away before the answer was sent (the change may still have been made).
          const status = finished ? response.statusCode : 499;
          const detail = finished ? context.failure : 'the caller went away before the answer was sent';
          await options.sink.record(await event(status, context.answer, detail));
        })(),
      );
    });
    next();
  }

  /** Called with every error the chain answers: remembers its message, and records a 401 or 403 of /api. */
  function failed(request: Request, response: Response, failure: GatewayError): void {
    const context = options.context(response);
    if (!context) return;
    context.failure = failure.message;
    if (failure.status !== 401 && failure.status !== 403) return;
    if (context.path !== '/api' && !context.path.startsWith('/api/')) return;
    context.refused = true;
    const event: AuditEvent = {
      // A 401 knows nobody; a 403 knows who was refused.
      actor: context.principal?.label ?? 'anonymous',
      role: context.principal?.roleId,
      action: 'access_denied',
      target: targetOf(request.method, context),
      status: failure.status,
      source: request.socket.remoteAddress,
      requestId: context.requestId,
      detail: failure.message,
    };
    track(options.sink.record(event));
  }

  return {
    changes,
    failed,
    /**
     * Resolves once every record under way is stored (or failed), and what the sink keeps was tried once more:
     * call before closing the store.
     */
    async drain(): Promise<void> {
      while (pending.size > 0) await Promise.allSettled([...pending]);
      await options.sink.drain();
    },
  };
}
