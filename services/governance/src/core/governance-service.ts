import type { Usage } from '@gw/shared';

export interface PlanTarget {
  /** Empty when the request named a bare model: governance picks providers from the virtual key. */
  provider: string;
  model: string;
  keyIds?: string[] | undefined;
}

/** What ingress knows of a request before anything is routed. */
export interface AuthorizeRequest {
  requestId: string;
  /**
   * `llm` for completions; `mcp` for tool execution and `meta` for calls that reach no model (token counts):
   * these two check required headers and the key's status only.
   */
  kind: 'llm' | 'mcp' | 'meta';
  /** The `sk-gw-…` value from any of the five headers, when one was sent. */
  virtualKey?: string | undefined;
  /** Lowercased names of the request's headers (values are not needed to check required headers). */
  headerNames: string[];
  /** The requested target, then the request's fallbacks. */
  targets: PlanTarget[];
  /** For budget reservations: an estimate of the prompt's tokens and the most the answer may use. */
  estimate?: { promptTokens: number; maxCompletionTokens?: number | undefined } | undefined;
}

/** A counter charged at settlement, with what authorize already added to it. */
export interface SettlementCounter {
  key: string;
  kind: 'budget' | 'tokens';
  reserved: number;
  expireAtMs: number;
}

/** Everything Settle needs, returned by Authorize and handed back unchanged (also kept as the reservation). */
export interface SettlementPlan {
  reservationId: string;
  virtualKeyId: string;
  /** Counters of the key and its owners, charged whatever provider serves. */
  counters: SettlementCounter[];
  /** Counters of each provider config, charged only for the provider that served. */
  providerCounters: Record<string, SettlementCounter[]>;
  /** Providers of the plan's targets, in order (the store reports the admitted one by index). */
  alternativeProviders: string[];
  /** The provider config whose counters received the reserved amounts at admission. */
  reservedProvider?: string | undefined;
  /** Charged by the sweeper when no Settle arrives in time. */
  estimate: { model: string; provider: string; usage: Usage };
}

/** An allowed request: the routing plan and what Settle needs later. */
export interface AuthorizeResult {
  targets: PlanTarget[];
  virtualKeyId?: string | undefined;
  virtualKeyName?: string | undefined;
  /** The key's MCP tool policy (`[]` when it names none), so MCP filtering needs no second call. */
  mcpTools?: Array<{ client: string; tools: string[] }> | undefined;
  settlement?: SettlementPlan | undefined;
}

export interface SettleRequest {
  requestId: string;
  settlement: SettlementPlan;
  provider: string;
  model: string;
  usage: Usage;
}

/** Management of governance resources (the admin API), one shape for every collection. */
export interface ManageRequest {
  action: 'list' | 'get' | 'create' | 'update' | 'delete' | 'rotate' | 'usage';
  collection: string;
  id?: string | undefined;
  body?: unknown;
}

/** Governance's interface: the core implements it, and so does the gRPC client. Denials are GatewayErrors. */
export interface GovernanceService {
  authorize(request: AuthorizeRequest): Promise<AuthorizeResult>;
  /** Charges a finished request exactly once; a repeated settle of the same plan changes nothing. */
  settle(request: SettleRequest): Promise<void>;
  manage(request: ManageRequest): Promise<unknown>;
}
