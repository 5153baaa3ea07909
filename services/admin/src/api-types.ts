// `@gw/admin/api-types`: what the admin API (`/api/*`, `/auth/*`) takes and answers, for its clients (the web UI
// imports it with `import type`). Nothing here is written twice:
// - an answer a route builds is declared here, and the route builds it with `satisfies` (a field added, renamed
//   or dropped on either side fails the typecheck);
// - an answer a store or service gives is its own type, re-exported;
// - a request body (`…Input`) is inferred from the schema its route validates it with.
//
// Types only: every import and export is `type`, so importing this file loads nothing at run time and nothing of it
// reaches the UI's bundle. The UI's typecheck reads every file this one reaches, though, so it reaches the files
// that declare each type, not packages' main entries (which hold SDKs, servers and Redis clients): api-types.test.ts
// holds it to both.

import type { AuditStore, LogStore } from '@gw/logs';
import type {
  guardrailProfileSchema,
  guardrailRuleSchema,
  mcpClientEditSchema,
  modelAliasSchema,
  modelPriceSchema,
  RESTART_REQUIRED,
  routingRuleSchema,
  SystemSettings,
  virtualKeySchema,
} from '@gw/shared';
import type { LoadBalancerConfig } from '@gw/shared/health';
import type { z } from 'zod';
import type { HistoryPage } from '../../../packages/alerts/src/alert-registry.ts';
import type { alertChannelSchema, alertRuleSchema } from '../../../packages/alerts/src/alert-schemas.ts';
import type { SecretStatus } from '../../../packages/vault/src/secret-resolver.ts';
import type { dryRunRequestSchema, ManageResults } from '../../governance/src/core/governance-messages.ts';
import type { BuiltInPrice, ModelPrice } from '../../governance/src/core/pricing.ts';
import type { Collection, StoredOf } from '../../governance/src/core/resources.ts';
import type { McpClientView } from '../../mcp-runner/src/core/mcp-registry.ts';
import type { AdminToken, IdentityStore } from './core/access/identity-store.ts';
import type { Permission } from './core/access/permissions.ts';

export type { AuditVerification, LogRecord, LogStatsBucket } from '@gw/logs';
export type {
  ErrorBody,
  GuardrailProfile,
  GuardrailRule,
  ProviderView,
  SettingField,
  SystemSettings,
} from '@gw/shared';
export type { LoadBalancerConfig, ProviderHealthReport, TargetHealthReport } from '@gw/shared/health';
export type { AlertChannel, AlertRule } from '../../../packages/alerts/src/alert-schemas.ts';
export type { RoleInput, TokenInput, UserInput } from './core/access/identity-input.ts';
export type { AdminUser } from './core/access/identity-store.ts';
export type { Permission, RoleDefinition } from './core/access/permissions.ts';
export type { SessionView } from './core/sso/session-view.ts';

/** `GET /api/whoami`: the caller as the admin API sees them. */
export interface Whoami {
  /** What authenticated them. */
  kind: 'bootstrap' | 'token' | 'session' | 'anonymous';
  label: string;
  /** The role's id. */
  role: string;
  permissions: Permission[];
  team_scoped: boolean;
  team_ids: readonly string[];
  user_id: string | null;
}

/**
 * `GET /api/gateway-address`: where apps reach gw's inference API. `setting`: `client.public_url`;
 * `deployment`: GW_PUBLIC_URL (a cluster's ingress); null: nothing says (the console's own address).
 */
export interface GatewayAddress {
  public_url: string | null;
  source: 'setting' | 'deployment' | null;
}

/** A provider key test's answer: whether the key served a one-token completion, and how long it took. */
export interface KeyTestResult {
  ok: boolean;
  provider: string;
  key_id: string;
  model: string;
  latency_ms: number;
  /** Why it failed: gw's error as any caller would get it (secrets already redacted by the router). */
  error?: { type: string; status: number; message: string };
}

/** `PUT /api/load-balancer/config`'s body: the fields to change (`score_weights` too may name only some). */
export type LoadBalancerChange = Partial<Omit<LoadBalancerConfig, 'score_weights'>> & {
  score_weights?: Partial<LoadBalancerConfig['score_weights']>;
};

/**
 * A governance resource as the API shows it: as stored, never a virtual key's hash (`GovernanceRepository.view`).
 * Of several collections, one of their resources (`GovernanceResource<'teams' | 'customers'>`).
 */
export type GovernanceResource<C extends Collection> = C extends Collection
  ? Omit<StoredOf<C>, 'value_hash'>
  : never;
export type VirtualKey = GovernanceResource<'virtual-keys'>;
export type Team = GovernanceResource<'teams'>;
export type Customer = GovernanceResource<'customers'>;
export type BusinessUnit = GovernanceResource<'business-units'>;
/** A budget owner of `/api/governance/users` (people who sign in to the admin API are `/api/users`). */
export type BudgetUser = GovernanceResource<'users'>;
export type ModelAlias = GovernanceResource<'model-aliases'>;
/** A virtual key's create or rotate answer: the key with its value, the only times it is shown. */
export type CreatedVirtualKey = VirtualKey & { value: string };
/** `GET /api/governance/{collection}/{id}/usage`: every budget and limit, what is used and when it resets. */
export type UsageReport = ManageResults['usage'];
export type VirtualKeyInput = z.input<typeof virtualKeySchema>;
export type ModelAliasInput = z.input<typeof modelAliasSchema>;
/** `/api/governance/routing-rules`: a routing rule as stored, and what a create or PUT takes. */
export type RoutingRule = GovernanceResource<'routing-rules'>;
export type RoutingRuleInput = z.input<typeof routingRuleSchema>;
/** `POST /api/governance/routing-rules/dry-run`: what it takes, and the decision and targets it answers. */
export type DryRunInput = z.input<typeof dryRunRequestSchema>;
export type DryRunResult = ManageResults['dry-run'];
export type { RoutingCandidate, RoutingDecision, RoutingStrategy } from '@gw/shared';
/** One budget of a governance resource's `budgets` (a PATCH keeps a budget's spend by sending its `id`). */
export type BudgetInput = NonNullable<VirtualKeyInput['budgets']>[number];

/** `GET /api/logs`: a page of records, and the cursor of the next one. */
export type LogPage = Awaited<ReturnType<LogStore['query']>>;
/** `GET /api/logs/stats`: buckets of one size, grouped or not. */
export type LogStats = Awaited<ReturnType<LogStore['stats']>>;
/** `GET /api/spend`: requests, tokens and charged cost per group over a period (CSV with `format=csv`). */
export type SpendReport = Awaited<ReturnType<LogStore['spend']>>;
/** `GET /api/spend?format=csv`: the report as CSV text, a header row then a row per group. */
export type SpendCsv = string;
/** What `/api/spend` can group by. */
export type SpendGroup = SpendReport['group_by'];
/** One entry of a usage report: a budget (USD) or a requests or tokens limit. */
export type UsageEntry = UsageReport['usage'][number]['entries'][number];
/** `GET /api/audit-logs`: a page of records, and the cursor of the next one. */
export type AuditPage = Awaited<ReturnType<AuditStore['query']>>;

export type AlertChannelInput = z.input<typeof alertChannelSchema>;
export type AlertRuleInput = z.input<typeof alertRuleSchema>;
/** `GET /api/alerts/history`: the sends, newest first, and the cursor of the next page. */
export type AlertHistoryPage = HistoryPage;

export type GuardrailProfileInput = z.input<typeof guardrailProfileSchema>;
export type GuardrailRuleInput = z.input<typeof guardrailRuleSchema>;

/** An MCP client as the admin API shows it: the runners' view without the tools' definitions, URL redacted. */
export type McpClient = Omit<McpClientView, 'definitions'>;
/** What an add, an edit and a reconnect answer: the client once a runner reported on it (or the wait ended). */
export interface McpClientChange {
  status: 'success';
  message: string;
  client: McpClient;
}
/** `PUT|PATCH /api/mcp/client/{name}`'s body: filter edits, `null` removing a list. */
export type McpClientEdit = z.input<typeof mcpClientEditSchema>;

/** A token as `GET /api/tokens` lists it (never its value), with its last use once it has one. */
export type AdminTokenView = Awaited<ReturnType<IdentityStore['listTokens']>>[number];
/** `POST /api/tokens`'s answer: the token and, this once, its value. */
export type CreatedToken = AdminToken & { token: string };

/** `GET /api/vault/secrets` and `POST /api/vault/refresh`: every secret-manager reference's state, never a value. */
export interface VaultSecrets {
  secrets: SecretStatus[];
}

/** A cache removal's answer: the scope, the entry's id or cache key when one was named, and how many went. */
export interface CacheRemoval {
  scope: string;
  id?: string;
  key?: string;
  removed: number;
}

export type { BuiltInPrice, ModelPrice } from '../../governance/src/core/pricing.ts';
/** `PUT /api/pricing/models/{model}`'s body: a whole price, USD per million tokens (a PATCH takes some of it). */
export type ModelPriceInput = z.input<typeof modelPriceSchema>;

/** `GET /api/pricing`: the built-in prices, the operator's overrides, the unpriced default and the prices in force. */
export interface PricingView {
  /** Each with the provider's pricing page it was read from and the day it was last checked (`as_of`). */
  built_in: BuiltInPrice[];
  /** Overrides per model name, as `governance.pricing` of the config file holds them. */
  overrides: Readonly<Record<string, ModelPrice>>;
  /** What a model without a price costs under a budget; null: such a request is refused. */
  unpriced_model_price: ModelPrice | null;
  /**
   * Every model built in or overridden, with the price charged for it and where that price comes from; an
   * override named `<provider>/<model>` of a known provider says which `provider`'s price of the model it is.
   */
  effective: Array<{ model: string; provider?: string; price: ModelPrice; from: 'override' | 'built_in' }>;
}

/** `GET|PUT|PATCH|DELETE /api/pricing/models/{model}`: one model as admission prices it. */
export interface ModelPricing {
  model: string;
  /** A name `<provider>/<model>` of a known provider: the provider it is priced for. */
  provider?: string;
  /** Its own override (by this exact name). */
  override: ModelPrice | null;
  /** The built-in price its name resolves to (`gpt-4o` for `gpt-4o-2024-08-06`). */
  built_in: BuiltInPrice | null;
  /** The price charged: `priced_as` is the name it is kept under; null when the model is refused under a budget. */
  effective: {
    price: ModelPrice;
    from: 'override' | 'built_in' | 'unpriced';
    priced_as: string | null;
  } | null;
}

/** `GET|PUT|DELETE /api/pricing/unpriced`: the unpriced default. */
export interface UnpricedPricing {
  unpriced_model_price: ModelPrice | null;
}

/**
 * `GET|PUT /api/config`'s answer: the settings (price overrides are `/api/pricing`'s), and those that apply only at
 * a process's next start.
 */
export type SystemSettingsView = Omit<SystemSettings, 'governance'> & {
  governance: Pick<SystemSettings['governance'], 'settings'>;
  restart_required: typeof RESTART_REQUIRED;
};
