import { GatewayError } from './gateway-error.ts';

/**
 * A call a peer took and then never answered: its lane or stream broke, it stopped answering health checks, or
 * the deadline passed. The peer may have served it all the same (a router that called the upstream, then
 * froze, and whose late answer nobody reads), so the ingress leaves its reservation to the sweeper, which
 * charges it from what the router reported of the call (docs/governance.md "Exactness and settlement"). The
 * caller sees the failure it wraps (a 503).
 */
export class UnansweredCallError extends GatewayError {
  constructor(failure: GatewayError) {
    super({ ...failure.toJSON(), cause: failure.cause });
    this.name = 'UnansweredCallError';
  }
}
