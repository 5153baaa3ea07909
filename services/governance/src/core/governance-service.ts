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

/**
 * Admission, the port a request's path uses: authorize once before the router, settle once after. A governance
 * core implements it (embedded mode), so does an ingress's own admission (a cluster, `startAdmission`) and the
 * gRPC client (remote admission). Denials are GatewayErrors.
 */
export interface Admission {
  authorize(request: AuthorizeRequest, options?: GovernanceCallOptions): Promise<AuthorizeResult>;
  /** Charges a finished request exactly once; a repeated settle of the same plan changes nothing. */
  settle(request: SettleRequest, options?: GovernanceCallOptions): Promise<SettleResult>;
}

/**
 * Governance's interface: admission and the management the admin API calls. The core and the gRPC client
 * implement it.
 */
export interface GovernanceService extends Admission {
  /** Management of governance resources (the admin API); the answer's type follows the action. */
  manage<Request extends ManageRequest>(request: Request): Promise<ManageResults[Request['action']]>;
}
