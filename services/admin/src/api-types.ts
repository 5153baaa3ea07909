// `@gw/admin/api-types`: what the admin API (`/api/*`, `/auth/*`) takes and answers, for its clients (the web UI
// imports it with `import type`). Every answer type is the server's own: the type a route builds its answer with
// (`satisfies`), or the one the store or service it passes on answers with; request bodies (`…Input`) are inferred
// from the schemas the routes validate with. Nothing here is written twice.
//
// Types only: every line is `import type` or `export type`, so importing this file loads nothing and nothing of it
// reaches the UI's bundle (api-types.test.ts holds it to that).
import type { AlertRegistry, alertChannelSchema, alertRuleSchema } from '@gw/alerts';
import type { Collection, ManageResults, StoredOf } from '@gw/governance';
import type { AuditStore, LogStore } from '@gw/logs';
import type {
  guardrailProfileSchema,
  guardrailRuleSchema,
  mcpClientConfigSchema,
  modelAliasSchema,
  RESTART_REQUIRED,
  SystemSettings,
  virtualKeySchema,
} from '@gw/shared';
import type { z } from 'zod';
import type { IdentityStore } from './core/access/identity-store.ts';

export type { AlertChannel, AlertRule } from '@gw/alerts';
export type { AuditRecord, AuditVerification, LogRecord, LogStatsBucket } from '@gw/logs';
export type {
  ErrorBody,
  GuardrailProfile,
  GuardrailRule,
  ProviderInput,
  ProviderView,
  SystemSettings,
} from '@gw/shared';
export type { LoadBalancerConfig, ProviderHealthReport, TargetHealthReport } from '@gw/shared/health';
export type { AdminUser } from './core/access/identity-store.ts';
export type { Permission, RoleDefinition } from './core/access/permissions.ts';
export type { CacheRemoval } from './core/modules/cache-admin.ts';
export type { CreatedToken, RoleInput, TokenInput, UserInput } from './core/modules/identity-admin.ts';
export type { LoadBalancerChange } from './core/modules/load-balancer-admin.ts';
export type { McpClient, McpClientChange, McpClientEdit } from './core/modules/mcp-admin.ts';
export type { KeyTestResult } from './core/modules/provider-key-test.ts';
export type { VaultSecrets } from './core/modules/vault-admin.ts';
export type { Whoami } from './core/modules/whoami-admin.ts';
export type { SessionView } from './core/sso/sso-router.ts';

/** A governance resource as the API shows it: as stored, never a virtual key's hash (`GovernanceRepository.view`). */
export type GovernanceResource<C extends Collection> = Omit<StoredOf<C>, 'value_hash'>;
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
/** One budget of a governance resource's `budgets` (a PATCH keeps a budget's spend by sending its `id`). */
export type BudgetInput = NonNullable<VirtualKeyInput['budgets']>[number];

/** `GET /api/logs`: a page of records, and the cursor of the next one. */
export type LogPage = Awaited<ReturnType<LogStore['query']>>;
/** `GET /api/logs/stats`: buckets of one size, grouped or not. */
export type LogStats = Awaited<ReturnType<LogStore['stats']>>;
/** `GET /api/audit-logs`: a page of records, and the cursor of the next one. */
export type AuditPage = Awaited<ReturnType<AuditStore['query']>>;

export type AlertChannelInput = z.input<typeof alertChannelSchema>;
export type AlertRuleInput = z.input<typeof alertRuleSchema>;
/** `GET /api/alerts/history`: the sends, newest first, and the cursor of the next page. */
export type AlertHistoryPage = Awaited<ReturnType<AlertRegistry['history']>>;

export type GuardrailProfileInput = z.input<typeof guardrailProfileSchema>;
export type GuardrailRuleInput = z.input<typeof guardrailRuleSchema>;

export type McpClientInput = z.input<typeof mcpClientConfigSchema>;

/** A token as `GET /api/tokens` lists it (never its value), with its last use once it has one. */
export type AdminTokenView = Awaited<ReturnType<IdentityStore['listTokens']>>[number];

/** `GET|PUT /api/config`'s answer: the settings, and those that apply only at a process's next start. */
export type SystemSettingsView = SystemSettings & { restart_required: typeof RESTART_REQUIRED };
