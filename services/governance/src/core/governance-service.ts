import type { TraceContext } from '@gw/shared/tracing';
import type {
  AuthorizeRequest,
  AuthorizeResult,
  ManageRequest,
  ManageResults,
  SettleRequest,
  SettleResult,
} from './governance-messages.ts';

export type {
  AuthorizeRequest,
  AuthorizeResult,
  ManageRequest,
  PlanTarget,
  SettlementCounter,
  SettlementPlan,
  SettleRequest,
  SettleResult,
  SideCall,
} from './governance-messages.ts';

/** How a call is made: the caller's trace context, when it traces (docs/tracing.md). */
export interface GovernanceCallOptions {
  trace?: TraceContext | undefined;
}

/** Governance's interface: the core implements it, and so does the gRPC client. Denials are GatewayErrors. */
export interface GovernanceService {
  authorize(request: AuthorizeRequest, options?: GovernanceCallOptions): Promise<AuthorizeResult>;
  /** Charges a finished request exactly once; a repeated settle of the same plan changes nothing. */
  settle(request: SettleRequest, options?: GovernanceCallOptions): Promise<SettleResult>;
  /** Management of governance resources (the admin API); the answer's type follows the action. */
  manage<Request extends ManageRequest>(request: Request): Promise<ManageResults[Request['action']]>;
}
