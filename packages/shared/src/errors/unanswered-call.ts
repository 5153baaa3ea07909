import { GatewayError } from './gateway-error.ts';

/**
 * A call a peer took and then never answered: its lane or stream broke, it stopped answering health checks, or
 * the deadline passed. The peer may have served it all the same (a router that called the upstream, then
 * froze, and whose late answer nobody reads), so settlement charges it what admission reserved instead of
 * releasing the reservation. The caller sees the failure it wraps (a 503).
 */
export class UnansweredCallError extends GatewayError {
  constructor(failure: GatewayError) {
    super({ ...failure.toJSON(), cause: failure.cause });
    this.name = 'UnansweredCallError';
  }
}
