import type {
  AuthorizeRequest,
  AuthorizeResult,
  ManageRequest,
  ManageResults,
  SettleRequest,
} from './governance-messages.ts';

export type {
  AuthorizeRequest,
  AuthorizeResult,
  ManageRequest,
  PlanTarget,
  SettlementCounter,
  SettlementPlan,
  SettleRequest,
} from './governance-messages.ts';

/** Governance's interface: the core implements it, and so does the gRPC client. Denials are GatewayErrors. */
export interface GovernanceService {
  authorize(request: AuthorizeRequest): Promise<AuthorizeResult>;
  /** Charges a finished request exactly once; a repeated settle of the same plan changes nothing. */
  settle(request: SettleRequest): Promise<void>;
  /** Management of governance resources (the admin API); the answer's type follows the action. */
  manage<Request extends ManageRequest>(request: Request): Promise<ManageResults[Request['action']]>;
}
