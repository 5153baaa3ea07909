import type { GatewayError } from '@gw/shared';
import type { Outcome } from '@gw/shared/health';

/**
 * What a failed attempt says about its target: a server error, a 429, a timeout or no connection count against
 * it (all but the 429 toward ejection too); a caller's mistake (400, 404, 422…), a refused credential and gw's own refusals (a full queue) say nothing.
 */
export function healthOutcome(failure: GatewayError): Outcome | undefined {
  if (failure.type === 'upstream_timeout' || failure.type === 'upstream_unreachable') {
    return { failure: true };
  }
  if (failure.upstream && failure.status >= 500) return { failure: true };
  // A 429 counts in the error rate, not toward ejection: the upstream is limiting, not down.
  if (failure.upstream && failure.status === 429) return { failure: true, ejects: false };
  return undefined;
}

/** The same for an upstream's answer relayed as it is (pass-through): its status says it. */
export function statusOutcome(status: number, latencyMs: number): Outcome | undefined {
  if (status >= 500) return { failure: true };
  if (status === 429) return { failure: true, ejects: false };
  return status < 400 ? { failure: false, latencyMs } : undefined;
}
