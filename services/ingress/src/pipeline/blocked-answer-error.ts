import { GatewayError, type Usage } from '@gw/shared';

/**
 * A 446 for an answer that was generated: it carries what was served, so the settle stage charges its usage
 * (a caller cannot get tokens for free by making an answer fail its checks).
 */
export class BlockedAnswerError extends GatewayError {
  readonly served: { provider: string; model: string; usage: Usage };

  constructor(error: GatewayError, served: { provider: string; model: string; usage: Usage }) {
    super({ ...error.toJSON(), cause: error.cause });
    this.served = served;
  }
}
