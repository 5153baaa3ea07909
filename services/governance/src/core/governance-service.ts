import type { Usage } from '@gw/shared';

export interface PlanTarget {
  provider: string;
  model: string;
  keyIds?: string[] | undefined;
}

/** What ingress knows of a request before anything is routed. */
export interface AuthorizeRequest {
  requestId: string;
  /** `llm` for completions, `mcp` for tool execution. */
  kind: 'llm' | 'mcp';
  /** The `sk-gw-…` value from any of the five headers, when one was sent. */
  virtualKey?: string | undefined;
  /** Lowercased names of the request's headers (values are not needed to check required headers). */
  headerNames: string[];
  /** The requested target, then the request's fallbacks. */
  targets: PlanTarget[];
}

/** An allowed request: the routing plan and what Settle needs later. */
export interface AuthorizeResult {
  targets: PlanTarget[];
  virtualKeyId?: string | undefined;
}

export interface SettleRequest {
  requestId: string;
  virtualKeyId: string;
  provider: string;
  model: string;
  usage: Usage;
}

/** Governance's interface: the core implements it, and so does the gRPC client. Denials are GatewayErrors. */
export interface GovernanceService {
  authorize(request: AuthorizeRequest): Promise<AuthorizeResult>;
  settle(request: SettleRequest): Promise<void>;
}
