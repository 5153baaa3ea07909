import type { CacheBackend } from '@gw/cache';
import type { GovernanceService } from '@gw/governance';
import { GuardrailRegistry } from '@gw/guardrails/registry';
import type { LogStore, LogTail } from '@gw/logs';
import type { McpRegistry } from '@gw/mcp-runner/control';
import type { RouterService } from '@gw/router';
import {
  type GatewayConfig,
  type LiveSettings,
  type Logger,
  outboundPolicy,
  secretReferenceRule,
} from '@gw/shared';
import type { Store } from '@gw/shared/store';
import { uiDistDir } from '@gw/ui';
import { IdentityStore } from './core/access/identity-store.ts';
import { createAdminApp } from './core/admin-app.ts';
import { type AuditHolder, createAuditStoreSink, storeHolder } from './core/audit/audit-store-sink.ts';
import type { AlertsAdminOptions } from './core/modules/alerts-admin.ts';
import type { AuditLogsAdminOptions } from './core/modules/audit-logs-admin.ts';
import type { VaultAdminOptions } from './core/modules/vault-admin.ts';
import { ScimGroupStore } from './core/scim/scim-groups.ts';

/** The admin API of a gateway config: its one composition root, used by its main and by the embedded gateway. */
export function composeAdmin(options: {
  config: GatewayConfig;
  /** The live settings (`/api/config` changes them; anonymous access follows them). */
  settings: LiveSettings;
  router: RouterService;
  governance: GovernanceService;
  logger: Logger;
  /** GATEWAY_ADMIN_TOKEN, injected by the process's main. */
  adminToken: string | undefined;
  /** GW_PUBLIC_URL, injected by the process's main: the ingress's address as the deployment knows it. */
  publicUrl?: string | undefined;
  /** GW_SCIM_TOKEN, injected by the process's main: the bearer token of `/scim/v2`. */
  scimToken?: string | undefined;
  mcpRegistry: McpRegistry | undefined;
  /** The state store (the load balancer's config document); absent in a cluster admin without REDIS_URL. */
  store: Store | undefined;
  /** The response cache's entries, when `cache.enabled` (the admin API removes from them). */
  cacheBackend?: CacheBackend | undefined;
  /** The process's alerts (`startAlerts` of `@gw/alerts`); absent without a store. */
  alerts?: Omit<AlertsAdminOptions, 'outbound' | 'secretReferences'> | undefined;
  /** `/api/vault/*`: the process's secret resolver, and in a cluster the refresh of the others. */
  vault?: VaultAdminOptions | undefined;
  /** Request logs: where they are read and tailed, or why they are off here. */
  logs?: { store?: LogStore | undefined; tail?: LogTail | undefined; unavailable?: string | undefined };
  /** GW_OIDC_CLIENT_SECRET, injected by the process's main (single sign-on's client secret, `auth.oidc`). */
  oidcClientSecret?: string | undefined;
  /**
   * The audit log: its store (changes and refusals are recorded into it), or why there is none; `onFailure`
   * counts records not held; `queue` holds records in front of the store (audit.on_store_failure: queue).
   */
  audit?: (AuditLogsAdminOptions & { onFailure?: () => void; queue?: AuditHolder | undefined }) | undefined;
}) {
  const { client } = options.settings;
  const outbound = outboundPolicy(options.config.network);
  return createAdminApp({
    router: options.router,
    governance: options.governance,
    logger: options.logger,
    auth: {
      adminToken: options.adminToken,
      get allowAnonymous() {
        return client.current().allow_anonymous_admin;
      },
    },
    outbound,
    secretReferences: secretReferenceRule(options.config.admin.secret_references),
    mcp: { registry: options.mcpRegistry, remoteUrls: options.config.network.mcp_remote_urls },
    loadBalancer: { store: options.store, seed: options.settings.loadBalancer },
    systemConfig: { store: options.store, settings: options.settings },
    guardrails: {
      registry: options.store && new GuardrailRegistry({ store: options.store, logger: options.logger }),
    },
    cache: { backend: options.cacheBackend },
    alerts: options.alerts,
    vault: options.vault,
    ...(options.logs && { logs: options.logs }),
    identities: options.store && new IdentityStore({ store: options.store, logger: options.logger }),
    sso: {
      auth: options.config.auth,
      clientSecret: options.oidcClientSecret,
      store: options.store,
    },
    scim: {
      token: options.scimToken,
      groups: options.store && new ScimGroupStore({ store: options.store }),
      auth: options.config.auth,
    },
    ...(options.audit && {
      audit:
        options.audit.store &&
        createAuditStoreSink({
          holder: options.audit.queue ?? storeHolder(options.audit.store),
          logger: options.logger,
          onFailure: options.audit.onFailure,
        }),
      auditLogs: options.audit,
    }),
    allowedOrigins: options.config.admin.allowed_origins,
    publicUrl: options.publicUrl,
    uiDir: uiDistDir,
  });
}
